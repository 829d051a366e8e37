//! The figures of a scenario: the one pure function [`derive`] that turns
//! two raw samples into pressure as % of the wall time, /proc/vmstat
//! deltas, context switches and interrupts per second, and the CPU split
//! (the CPU of other processes and the disturbance verdict come from
//! `foreign`). A counter absent on either side, or one that went
//! backwards, gives `None`.

use super::foreign::{disturbance, foreign_cpu, ForeignCpu};
use super::TelemetrySample;
use crate::system::blockdev::{self, DeviceFigures};
use crate::system::counters::{Pressure, StatCounters};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// CPU pressure.
    pub cpu: PsiShare,
    /// Memory pressure.
    pub memory: PsiShare,
    /// I/O pressure.
    pub io: PsiShare,
}

/// Growth of /proc/vmstat counters over the scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct VmstatDeltas {
    /// pswpin: pages read back from swap.
    pub swap_in_pages: Option<u64>,
    /// pswpout: pages written to swap.
    pub swap_out_pages: Option<u64>,
    /// pgpgin: data read from block devices.
    pub page_in_kb: Option<u64>,
    /// pgpgout: data written to block devices.
    pub page_out_kb: Option<u64>,
    /// Every page fault (pgfault), major ones included.
    pub faults: Option<u64>,
    /// Page faults that had to read from disk (pgmajfault).
    pub major_faults: Option<u64>,
    /// Direct reclaim entered by allocations (sum of allocstall_*).
    pub alloc_stalls: Option<u64>,
    /// Pages scanned by reclaim (kswapd, direct, khugepaged, proactive).
    pub pages_scanned: Option<u64>,
    /// Pages reclaimed.
    pub pages_reclaimed: Option<u64>,
    /// Evicted pages faulted back in (workingset_refault_anon + _file).
    pub refaults: Option<u64>,
    /// Allocations that stalled to compact memory (compact_stall).
    pub compact_stalls: Option<u64>,
    /// Processes killed by the OOM killer (oom_kill).
    pub oom_kills: Option<u64>,
}

/// Share of all CPUs' time over the scenario, in %.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    /// User time.
    pub user_pct: Option<f64>,
    /// User time of niced processes.
    pub nice_pct: Option<f64>,
    /// Kernel time.
    pub system_pct: Option<f64>,
    /// Idle time.
    pub idle_pct: Option<f64>,
    /// Idle time with I/O outstanding.
    pub iowait_pct: Option<f64>,
    /// Hard interrupts.
    pub irq_pct: Option<f64>,
    /// Soft interrupts.
    pub softirq_pct: Option<f64>,
    /// Time the hypervisor gave to other guests.
    pub steal_pct: Option<f64>,
}

/// What the machine went through during one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TelemetryFigures {
    /// Wall time between the two samples: the window, part of the probe's
    /// lead before it, and the time the probe took to report after it.
    pub interval_ms: f64,
    /// Pressure stall information.
    pub psi: PsiFigures,
    /// Paging, swapping and reclaim.
    pub vmstat: VmstatDeltas,
    /// Context switches of the whole machine per second.
    pub context_switches_per_s: Option<f64>,
    /// Interrupts of the whole machine per second.
    pub interrupts_per_s: Option<f64>,
    /// How all CPUs' time was spent.
    pub cpu: CpuSplit,
    /// CPU of the processes that are not the run's.
    pub foreign: Option<ForeignCpu>,
    /// What the work directory's block device itself read and wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceFigures>,
    /// Why the measurement should not be trusted, when it was disturbed.
    pub disturbed: Option<String>,
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
    let device = match (before.device, after.device) {
        (Some(b), Some(a)) => blockdev::figures(b, a, wall_ns),
        _ => None,
    };
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
        device,
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
