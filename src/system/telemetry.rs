//! Per-scenario telemetry: the raw counters taken just before and just after
//! a probe's measurement ([`TelemetrySample`]), and the one pure function
//! ([`derive`]) that turns two samples into the figures stored with the
//! scenario: pressure as % of the wall time, /proc/vmstat deltas, context
//! switches and interrupts per second, the CPU split, the CPU of processes
//! that are not the run's, and whether the measurement was disturbed.

use super::counters::{self, Pressure, ProcessTicks, StatCounters};
use super::procfs::{clock_ticks_per_s, ProcError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Steal above this share of all CPU time marks a scenario as disturbed.
pub const DISTURBED_STEAL_PCT: f64 = 2.0;
/// CPU of other processes above this share of one CPU marks it as disturbed.
pub const DISTURBED_FOREIGN_CPU_PCT: f64 = 10.0;
/// How many of the other processes a disturbance warning names.
const TOP_FOREIGN: usize = 3;

/// The /proc/vmstat counters telemetry keeps (the rest are not stored).
const VMSTAT_KEYS: &[&str] = &[
    "pswpin",
    "pswpout",
    "pgpgin",
    "pgpgout",
    "pgfault",
    "pgmajfault",
    "allocstall_dma",
    "allocstall_dma32",
    "allocstall_normal",
    "allocstall_movable",
    "allocstall_device",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgscan_khugepaged",
    "pgscan_proactive",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgsteal_khugepaged",
    "pgsteal_proactive",
    "workingset_refault_anon",
    "workingset_refault_file",
    "compact_stall",
    "oom_kill",
    "thp_fault_alloc",
];

/// The CPU time of the processes that are not the run's, at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForeignProcesses {
    pub ticks_per_s: u64,
    pub processes: Vec<ProcessTicks>,
}

/// Raw counters at one moment; each is `None` when this kernel lacks it or
/// it could not be read (the reason is then in `errors`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    /// `CLOCK_MONOTONIC` time the sample was taken.
    pub taken_ns: u64,
    pub psi_cpu: Option<Pressure>,
    pub psi_memory: Option<Pressure>,
    pub psi_io: Option<Pressure>,
    /// The counters of /proc/vmstat listed in `VMSTAT_KEYS` this kernel has.
    pub vmstat: Option<BTreeMap<String, u64>>,
    pub stat: Option<StatCounters>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Not stored: what it yields is in the figures.
    #[serde(skip)]
    pub foreign: Option<ForeignProcesses>,
}

/// Takes samples below one /proc root, telling the run's processes (those
/// whose environment holds `FEELBENCH_RUN=<marker>`, and this one) from the rest.
pub struct Sampler {
    proc_root: PathBuf,
    needle: Vec<u8>,
    me: u32,
    /// Whether a process (pid, start time) is the run's, as first looked up.
    ours: HashMap<u32, bool>,
}

impl Sampler {
    /// A sampler of `proc_root` for the run marked `marker`.
    pub fn new(proc_root: &Path, marker_var: &str, marker: &str) -> Self {
        Self {
            proc_root: proc_root.to_path_buf(),
            needle: format!("{marker_var}={marker}").into_bytes(),
            me: std::process::id(),
            ours: HashMap::new(),
        }
    }

    /// Reads every counter now.
    pub fn sample(&mut self, now_ns: u64) -> TelemetrySample {
        let root = self.proc_root.clone();
        let mut errors = Vec::new();
        let psi_cpu = keep(&mut errors, counters::read_pressure(&root, "cpu"));
        let psi_memory = keep(&mut errors, counters::read_pressure(&root, "memory"));
        let psi_io = keep(&mut errors, counters::read_pressure(&root, "io"));
        let vmstat = keep(
            &mut errors,
            counters::read_vmstat(&root).map(|all| {
                Some(
                    all.into_iter()
                        .filter(|(k, _)| VMSTAT_KEYS.contains(&k.as_str()))
                        .collect(),
                )
            }),
        );
        let stat = keep(&mut errors, counters::read_stat(&root).map(Some));
        let processes = counters::read_processes(&root, |pid| !self.is_ours(pid));
        TelemetrySample {
            taken_ns: now_ns,
            psi_cpu,
            psi_memory,
            psi_io,
            vmstat,
            stat,
            errors,
            foreign: Some(ForeignProcesses {
                ticks_per_s: clock_ticks_per_s(),
                processes,
            }),
        }
    }

    fn is_ours(&mut self, pid: u32) -> bool {
        if pid == self.me {
            return true;
        }
        if let Some(&ours) = self.ours.get(&pid) {
            return ours;
        }
        let environ = std::fs::read(self.proc_root.join(pid.to_string()).join("environ"));
        let ours = environ.is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == self.needle));
        // Only a marked process is remembered: an unmarked pid may be reused
        // by one of ours (and a pid of ours is not reused while the run holds it).
        if ours {
            self.ours.insert(pid, true);
        }
        ours
    }
}

/// The value of a reader, or `None` with its error noted.
fn keep<T>(errors: &mut Vec<String>, result: Result<Option<T>, ProcError>) -> Option<T> {
    result.unwrap_or_else(|e| {
        errors.push(e.to_string());
        None
    })
}

/// What one worker process used over its life (getrusage of itself, not
/// of the children it reaped).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcessUsage {
    pub user_cpu_ms: f64,
    pub system_cpu_ms: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Peak resident set size.
    pub max_rss_bytes: u64,
}

/// What this process used so far; `None` when getrusage fails.
pub fn self_usage() -> Option<ProcessUsage> {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let ms = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e3 + t.tv_usec() as f64 / 1e3;
    Some(ProcessUsage {
        user_cpu_ms: ms(usage.user_time()),
        system_cpu_ms: ms(usage.system_time()),
        voluntary_switches: usage.voluntary_context_switches().max(0) as u64,
        involuntary_switches: usage.involuntary_context_switches().max(0) as u64,
        // Linux reports kilobytes.
        max_rss_bytes: usage.max_rss().max(0) as u64 * 1024,
    })
}

/// Time stalled on a resource, as % of the scenario's wall time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiShare {
    /// Some task stalled.
    pub some_pct: Option<f64>,
    /// Every non-idle task stalled (always 0 system-wide for cpu).
    pub full_pct: Option<f64>,
}

/// Pressure of each resource over the scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiFigures {
    pub cpu: PsiShare,
    pub memory: PsiShare,
    pub io: PsiShare,
}

/// Growth of /proc/vmstat counters over the scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct VmstatDeltas {
    pub swap_in_pages: Option<u64>,
    pub swap_out_pages: Option<u64>,
    /// pgpgin: data read from block devices.
    pub page_in_kb: Option<u64>,
    /// pgpgout: data written to block devices.
    pub page_out_kb: Option<u64>,
    /// Every page fault (pgfault), major ones included.
    pub faults: Option<u64>,
    pub major_faults: Option<u64>,
    /// Direct reclaim entered by allocations (sum of allocstall_*).
    pub alloc_stalls: Option<u64>,
    /// Pages scanned by reclaim (kswapd, direct, khugepaged, proactive).
    pub pages_scanned: Option<u64>,
    /// Pages reclaimed.
    pub pages_reclaimed: Option<u64>,
    /// Evicted pages faulted back in (workingset_refault_anon + _file).
    pub refaults: Option<u64>,
    pub compact_stalls: Option<u64>,
    pub oom_kills: Option<u64>,
}

/// Share of all CPUs' time over the scenario, in %.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    pub user_pct: Option<f64>,
    pub nice_pct: Option<f64>,
    pub system_pct: Option<f64>,
    pub idle_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    pub irq_pct: Option<f64>,
    pub softirq_pct: Option<f64>,
    pub steal_pct: Option<f64>,
}

/// A process that is not the run's, and the CPU it used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignProcess {
    pub pid: u32,
    pub comm: String,
    /// CPU used over the scenario, in % of one CPU.
    pub cpu_pct: f64,
}

/// CPU used during the scenario by processes that are not the run's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignCpu {
    /// User-space processes, in % of one CPU.
    pub cpu_pct: f64,
    /// Kernel threads (writeback, reclaim: often work the loads caused), in % of one CPU.
    pub kernel_threads_cpu_pct: f64,
    /// The largest user-space consumers, largest first.
    pub top: Vec<ForeignProcess>,
}

/// What the machine went through during one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TelemetryFigures {
    /// Wall time between the two samples: the window, part of the probe's
    /// lead before it, and the time the probe took to report after it.
    pub interval_ms: f64,
    pub psi: PsiFigures,
    pub vmstat: VmstatDeltas,
    pub context_switches_per_s: Option<f64>,
    pub interrupts_per_s: Option<f64>,
    pub cpu: CpuSplit,
    pub foreign: Option<ForeignCpu>,
    /// Why the measurement should not be trusted, when it was disturbed.
    pub disturbed: Option<String>,
}

/// The telemetry of one scenario: raw samples and what they yield.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioTelemetry {
    pub figures: TelemetryFigures,
    pub before: TelemetrySample,
    pub after: TelemetrySample,
}

impl ScenarioTelemetry {
    /// Telemetry of the span between `before` and `after`.
    pub fn new(before: TelemetrySample, after: TelemetrySample) -> Self {
        let wall_ns = after.taken_ns.saturating_sub(before.taken_ns);
        Self {
            figures: derive(&before, &after, wall_ns),
            before,
            after,
        }
    }
}

/// Growth of a counter; `None` when either side is absent or it went backwards.
fn delta(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    after?.checked_sub(before?)
}

/// Growth of the sum of the counters among `keys` the kernel has; `None`
/// when it has none of them.
fn sum_delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    keys: &[&str],
) -> Option<u64> {
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| before.contains_key(*k) && after.contains_key(*k))
        .collect();
    if present.is_empty() {
        return None;
    }
    let sum = |m: &BTreeMap<String, u64>| present.iter().map(|k| m[*k]).sum::<u64>();
    delta(Some(sum(before)), Some(sum(after)))
}

/// The figures of the span between two samples `wall_ns` apart.
pub fn derive(before: &TelemetrySample, after: &TelemetrySample, wall_ns: u64) -> TelemetryFigures {
    let psi = PsiFigures {
        cpu: psi_share(before.psi_cpu, after.psi_cpu, wall_ns),
        memory: psi_share(before.psi_memory, after.psi_memory, wall_ns),
        io: psi_share(before.psi_io, after.psi_io, wall_ns),
    };
    let vmstat = match (&before.vmstat, &after.vmstat) {
        (Some(b), Some(a)) => vmstat_deltas(b, a),
        _ => VmstatDeltas::default(),
    };
    let per_s = |d: Option<u64>| {
        let d = d?;
        (wall_ns > 0).then(|| d as f64 * 1e9 / wall_ns as f64)
    };
    let (stat_b, stat_a) = (before.stat, after.stat);
    let cpu = match (stat_b, stat_a) {
        (Some(b), Some(a)) => cpu_split(&b, &a),
        _ => CpuSplit::default(),
    };
    let foreign = match (&before.foreign, &after.foreign) {
        (Some(b), Some(a)) => foreign_cpu(b, a, wall_ns),
        _ => None,
    };
    let disturbed = disturbance(cpu.steal_pct, foreign.as_ref());
    TelemetryFigures {
        interval_ms: wall_ns as f64 / 1e6,
        psi,
        vmstat,
        context_switches_per_s: per_s(delta(
            stat_b.and_then(|s| s.ctxt),
            stat_a.and_then(|s| s.ctxt),
        )),
        interrupts_per_s: per_s(delta(
            stat_b.and_then(|s| s.intr),
            stat_a.and_then(|s| s.intr),
        )),
        cpu,
        foreign,
        disturbed,
    }
}

fn psi_share(before: Option<Pressure>, after: Option<Pressure>, wall_ns: u64) -> PsiShare {
    let pct = |b: Option<u64>, a: Option<u64>| {
        let stalled_us = delta(b, a)?;
        (wall_ns > 0).then(|| stalled_us as f64 * 1e3 * 100.0 / wall_ns as f64)
    };
    let (b, a) = (before.unwrap_or_default(), after.unwrap_or_default());
    PsiShare {
        some_pct: pct(b.some.map(|l| l.total_us), a.some.map(|l| l.total_us)),
        full_pct: pct(b.full.map(|l| l.total_us), a.full.map(|l| l.total_us)),
    }
}

fn vmstat_deltas(b: &BTreeMap<String, u64>, a: &BTreeMap<String, u64>) -> VmstatDeltas {
    let one = |key: &str| delta(b.get(key).copied(), a.get(key).copied());
    let sum = |keys: &[&str]| sum_delta(b, a, keys);
    VmstatDeltas {
        swap_in_pages: one("pswpin"),
        swap_out_pages: one("pswpout"),
        page_in_kb: one("pgpgin"),
        page_out_kb: one("pgpgout"),
        faults: one("pgfault"),
        major_faults: one("pgmajfault"),
        alloc_stalls: sum(&[
            "allocstall_dma",
            "allocstall_dma32",
            "allocstall_normal",
            "allocstall_movable",
            "allocstall_device",
        ]),
        pages_scanned: sum(&[
            "pgscan_kswapd",
            "pgscan_direct",
            "pgscan_khugepaged",
            "pgscan_proactive",
        ]),
        pages_reclaimed: sum(&[
            "pgsteal_kswapd",
            "pgsteal_direct",
            "pgsteal_khugepaged",
            "pgsteal_proactive",
        ]),
        refaults: sum(&["workingset_refault_anon", "workingset_refault_file"]),
        compact_stalls: one("compact_stall"),
        oom_kills: one("oom_kill"),
    }
}

fn cpu_split(b: &StatCounters, a: &StatCounters) -> CpuSplit {
    let (b, a) = (b.cpu, a.cpu);
    let fields = [
        delta(Some(b.user), Some(a.user)),
        delta(Some(b.nice), Some(a.nice)),
        delta(Some(b.system), Some(a.system)),
        delta(Some(b.idle), Some(a.idle)),
        delta(b.iowait, a.iowait),
        delta(b.irq, a.irq),
        delta(b.softirq, a.softirq),
        delta(b.steal, a.steal),
    ];
    // A field that went backwards leaves the total unknown.
    let required_ok = fields[..4].iter().all(Option::is_some);
    let total: u64 = fields.iter().flatten().sum();
    let pct = |i: usize| {
        let d = fields[i]?;
        (required_ok && total > 0).then(|| d as f64 * 100.0 / total as f64)
    };
    CpuSplit {
        user_pct: pct(0),
        nice_pct: pct(1),
        system_pct: pct(2),
        idle_pct: pct(3),
        iowait_pct: pct(4),
        irq_pct: pct(5),
        softirq_pct: pct(6),
        steal_pct: pct(7),
    }
}

/// CPU of the processes in `after` over the span: growth for those also in
/// `before`, everything for those that started since (processes that began
/// and ended within the span are not seen).
fn foreign_cpu(
    before: &ForeignProcesses,
    after: &ForeignProcesses,
    wall_ns: u64,
) -> Option<ForeignCpu> {
    if wall_ns == 0 || after.ticks_per_s == 0 {
        return None;
    }
    let earlier: HashMap<(u32, u64), u64> = before
        .processes
        .iter()
        .map(|p| ((p.pid, p.start_ticks), p.cpu_ticks))
        .collect();
    let to_pct =
        |ticks: u64| ticks as f64 * 1e9 * 100.0 / (after.ticks_per_s as f64 * wall_ns as f64);
    let mut users = Vec::new();
    let mut kernel_ticks = 0;
    for p in &after.processes {
        let ticks = match earlier.get(&(p.pid, p.start_ticks)) {
            // A process's own time never shrinks; if it did, it adds nothing.
            Some(&was) => p.cpu_ticks.saturating_sub(was),
            None => p.cpu_ticks,
        };
        if p.kernel_thread {
            kernel_ticks += ticks;
        } else if ticks > 0 {
            users.push((ticks, p));
        }
    }
    let user_ticks: u64 = users.iter().map(|(t, _)| t).sum();
    users.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.pid.cmp(&y.1.pid)));
    Some(ForeignCpu {
        cpu_pct: to_pct(user_ticks),
        kernel_threads_cpu_pct: to_pct(kernel_ticks),
        top: users
            .iter()
            .take(TOP_FOREIGN)
            .map(|(ticks, p)| ForeignProcess {
                pid: p.pid,
                comm: p.comm.clone(),
                cpu_pct: to_pct(*ticks),
            })
            .collect(),
    })
}

/// The warning of a disturbed scenario: steal or other processes' CPU too high.
fn disturbance(steal_pct: Option<f64>, foreign: Option<&ForeignCpu>) -> Option<String> {
    let mut reasons = Vec::new();
    if let Some(steal) = steal_pct.filter(|s| *s > DISTURBED_STEAL_PCT) {
        reasons.push(format!("the hypervisor stole {steal:.1} % of the CPU time"));
    }
    if let Some(f) = foreign.filter(|f| f.cpu_pct > DISTURBED_FOREIGN_CPU_PCT) {
        let top: Vec<String> = f
            .top
            .iter()
            .map(|p| format!("{} (pid {}) {:.0} %", p.comm, p.pid, p.cpu_pct))
            .collect();
        reasons.push(format!(
            "other processes used {:.0} % of a CPU: {}",
            f.cpu_pct,
            top.join(", ")
        ));
    }
    (!reasons.is_empty()).then(|| {
        format!(
            "measurement disturbed: {}; repeat it on a quiet machine",
            reasons.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::counters::{CpuTicks, PressureLine};

    fn pressure(some_us: u64, full_us: Option<u64>) -> Option<Pressure> {
        let line = |total_us| PressureLine {
            avg10_pct: 0.0,
            avg60_pct: 0.0,
            avg300_pct: 0.0,
            total_us,
        };
        Some(Pressure {
            some: Some(line(some_us)),
            full: full_us.map(line),
        })
    }

    fn stat(user: u64, idle: u64, steal: Option<u64>, ctxt: u64) -> Option<StatCounters> {
        Some(StatCounters {
            cpu: CpuTicks {
                user,
                nice: 0,
                system: 0,
                idle,
                iowait: Some(0),
                irq: Some(0),
                softirq: Some(0),
                steal,
            },
            ctxt: Some(ctxt),
            intr: Some(ctxt * 2),
        })
    }

    fn process(pid: u32, comm: &str, cpu_ticks: u64, kernel_thread: bool) -> ProcessTicks {
        ProcessTicks {
            pid,
            ppid: 1,
            start_ticks: 1000 + pid as u64,
            comm: comm.into(),
            cpu_ticks,
            kernel_thread,
        }
    }

    fn vmstat(pairs: &[(&str, u64)]) -> Option<BTreeMap<String, u64>> {
        Some(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    /// Two samples 2 s apart on a 2-CPU machine with 100 ticks/s.
    fn samples() -> (TelemetrySample, TelemetrySample) {
        let before = TelemetrySample {
            taken_ns: 10_000_000_000,
            psi_cpu: pressure(5_000_000, Some(0)),
            psi_memory: pressure(0, Some(0)),
            psi_io: pressure(100, Some(50)),
            vmstat: vmstat(&[
                ("pswpin", 10),
                ("pgfault", 1000),
                ("allocstall_normal", 1),
                ("allocstall_movable", 2),
                ("pgscan_kswapd", 5),
            ]),
            stat: stat(1000, 5000, Some(100), 50_000),
            errors: vec![],
            foreign: Some(ForeignProcesses {
                ticks_per_s: 100,
                processes: vec![
                    process(10, "browser", 500, false),
                    process(11, "kworker/0:1", 7, true),
                ],
            }),
        };
        let after = TelemetrySample {
            taken_ns: 12_000_000_000,
            psi_cpu: pressure(6_000_000, Some(0)),
            psi_memory: pressure(0, Some(0)),
            psi_io: pressure(200_100, Some(100_050)),
            vmstat: vmstat(&[
                ("pswpin", 14),
                ("pgfault", 1500),
                ("allocstall_normal", 3),
                ("allocstall_movable", 4),
                ("pgscan_kswapd", 5),
            ]),
            // 400 ticks: 300 user, 94 idle, 6 steal.
            stat: stat(1300, 5094, Some(106), 54_000),
            errors: vec![],
            foreign: Some(ForeignProcesses {
                ticks_per_s: 100,
                processes: vec![
                    process(10, "browser", 540, false),
                    process(11, "kworker/0:1", 9, true),
                    process(12, "updater", 10, false),
                ],
            }),
        };
        (before, after)
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn figures_come_from_counter_growth_over_wall_time() {
        let (before, after) = samples();
        let f = derive(&before, &after, 2_000_000_000);
        assert_eq!(f.interval_ms, 2000.0);
        assert!(close(f.psi.cpu.some_pct, 50.0), "{:?}", f.psi.cpu);
        assert!(close(f.psi.cpu.full_pct, 0.0));
        assert!(close(f.psi.io.some_pct, 10.0));
        assert!(close(f.psi.io.full_pct, 5.0));
        assert_eq!(f.vmstat.swap_in_pages, Some(4));
        assert_eq!(f.vmstat.faults, Some(500));
        assert_eq!(f.vmstat.alloc_stalls, Some(4));
        assert_eq!(f.vmstat.pages_scanned, Some(0));
        assert_eq!(f.vmstat.swap_out_pages, None, "absent key");
        assert_eq!(f.vmstat.pages_reclaimed, None, "absent keys");
        assert!(close(f.context_switches_per_s, 2000.0));
        assert!(close(f.interrupts_per_s, 4000.0));
        assert!(close(f.cpu.user_pct, 75.0));
        assert!(close(f.cpu.idle_pct, 23.5));
        assert!(close(f.cpu.steal_pct, 1.5));
        let foreign = f.foreign.unwrap();
        // 40 + 10 ticks over 2 s at 100 ticks/s: 25 % of one CPU.
        assert!((foreign.cpu_pct - 25.0).abs() < 1e-9);
        assert!((foreign.kernel_threads_cpu_pct - 1.0).abs() < 1e-9);
        let names: Vec<&str> = foreign.top.iter().map(|p| p.comm.as_str()).collect();
        assert_eq!(names, ["browser", "updater"]);
        let warning = f.disturbed.unwrap();
        assert!(warning.contains("25 % of a CPU") && warning.contains("browser (pid 10) 20 %"));
        assert!(!warning.contains("stole"), "1.5 % steal is below the bar");
    }

    #[test]
    fn a_counter_that_went_backwards_gives_none() {
        let (before, mut after) = samples();
        after.psi_cpu = pressure(4_000_000, Some(0));
        after.vmstat = vmstat(&[("pswpin", 9), ("pgfault", 1500), ("allocstall_normal", 0)]);
        let mut s = after.stat.unwrap();
        s.ctxt = Some(1);
        s.cpu.idle = 4000;
        after.stat = Some(s);
        let f = derive(&before, &after, 2_000_000_000);
        assert_eq!(f.psi.cpu.some_pct, None);
        assert!(close(f.psi.cpu.full_pct, 0.0));
        assert_eq!(f.vmstat.swap_in_pages, None);
        assert_eq!(f.vmstat.faults, Some(500));
        assert_eq!(f.vmstat.alloc_stalls, None, "the sum went backwards");
        assert_eq!(f.context_switches_per_s, None);
        assert!(close(f.interrupts_per_s, 4000.0));
        assert_eq!(f.cpu, CpuSplit::default(), "total unknown");
    }

    #[test]
    fn absent_counters_give_none_not_zero() {
        let (mut before, mut after) = samples();
        for s in [&mut before, &mut after] {
            s.psi_cpu = None;
            s.psi_memory = None;
            s.psi_io = None;
            s.vmstat = None;
            s.stat = None;
            s.foreign = None;
        }
        let f = derive(&before, &after, 2_000_000_000);
        assert_eq!(f.psi, PsiFigures::default());
        assert_eq!(f.psi.cpu.some_pct, None);
        assert_eq!(f.vmstat, VmstatDeltas::default());
        assert_eq!(f.context_switches_per_s, None);
        assert_eq!(f.cpu.steal_pct, None);
        assert_eq!((f.foreign, f.disturbed), (None, None));
        assert_eq!(derive(&before, &after, 0).psi.cpu.some_pct, None);
    }

    #[test]
    fn steal_alone_disturbs_and_a_reused_pid_counts_as_new() {
        let (before, mut after) = samples();
        let mut s = after.stat.unwrap();
        s.cpu.steal = Some(120); // 20 of 414 ticks
        after.stat = Some(s);
        let mut foreign = after.foreign.take().unwrap();
        foreign.processes = vec![ProcessTicks {
            start_ticks: 99_999,
            ..process(10, "other", 3, false)
        }];
        after.foreign = Some(foreign);
        let f = derive(&before, &after, 2_000_000_000);
        assert!((f.foreign.as_ref().unwrap().cpu_pct - 1.5).abs() < 1e-9);
        let warning = f.disturbed.unwrap();
        assert!(
            warning.contains("stole 4.8 %") && !warning.contains("other processes"),
            "{warning}"
        );
    }

    #[test]
    fn raw_samples_round_trip_through_json_without_the_process_table() {
        let (before, after) = samples();
        let telemetry = ScenarioTelemetry::new(before, after);
        assert!(telemetry.figures.disturbed.is_some());
        let json = serde_json::to_string(&telemetry).unwrap();
        let back: ScenarioTelemetry = serde_json::from_str(&json).unwrap();
        assert_eq!(back.figures, telemetry.figures);
        assert_eq!(back.before.psi_io, telemetry.before.psi_io);
        assert_eq!(back.after.foreign, None);
    }

    /// The usage agrees, in its units, with the kernel's CPU clock of the
    /// process and its resident size, after 50 ms of CPU and a sleep.
    #[test]
    fn own_usage_is_read_in_its_units() {
        use nix::time::{clock_gettime, ClockId};
        let cpu_ms = || {
            let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).unwrap();
            t.tv_sec() as f64 * 1e3 + t.tv_nsec() as f64 / 1e6
        };
        let start = cpu_ms();
        while cpu_ms() < start + 50.0 {}
        std::thread::sleep(std::time::Duration::from_millis(1));
        let rss_kb: u64 = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let before_ms = cpu_ms();
        let u = self_usage().unwrap();
        let after_ms = cpu_ms();
        // getrusage splits that same clock into user and system time.
        let used_ms = u.user_cpu_ms + u.system_cpu_ms;
        assert!(
            before_ms - 1.0 <= used_ms && used_ms <= after_ms + 1.0,
            "{u:?}: {used_ms} ms of CPU, the clock says {before_ms}..{after_ms} ms"
        );
        assert!(u.voluntary_switches > 0, "{u:?}: slept, yet no switch");
        // The peak is at least what is resident now (counters the kernel
        // sums lazily may differ a little).
        assert!(
            u.max_rss_bytes >= rss_kb * 1024 / 2,
            "{u:?}: peak below the {rss_kb} kB resident now"
        );
    }

    #[test]
    fn sampler_reads_a_fixture_tree_and_skips_marked_processes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("pressure")).unwrap();
        std::fs::write(
            root.join("pressure/cpu"),
            include_str!("testdata/pressure_cpu"),
        )
        .unwrap();
        std::fs::write(root.join("vmstat"), include_str!("testdata/vmstat_old")).unwrap();
        std::fs::write(root.join("stat"), "cpu  1 2 3 4 5 6 7 oops\n").unwrap();
        for (pid, env) in [(20, "A=1\0FEELBENCH_RUN=m1\0"), (21, "A=1\0")] {
            let d = root.join(pid.to_string());
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("environ"), env).unwrap();
            std::fs::write(
                d.join("stat"),
                format!("{pid} (p) S 1 1 1 0 -1 0 0 0 0 0 4 5 0 0 20 0 1 0 77 0"),
            )
            .unwrap();
        }
        let s = Sampler::new(root, "FEELBENCH_RUN", "m1").sample(5);
        assert_eq!(s.taken_ns, 5);
        assert_eq!(s.psi_cpu.unwrap().some.unwrap().total_us, 989_275_295);
        assert_eq!(
            (s.psi_memory, s.psi_io),
            (None, None),
            "no PSI file: absent"
        );
        let vm = s.vmstat.unwrap();
        assert!(vm.contains_key("pgfault") && !vm.contains_key("nr_free_pages"));
        assert_eq!(s.stat, None);
        assert_eq!(s.errors.len(), 1);
        assert!(s.errors[0].contains("stat") && s.errors[0].contains("oops"));
        let pids: Vec<u32> = s.foreign.unwrap().processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [21]);
    }
}
