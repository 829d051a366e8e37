//! Who else used the CPU during a scenario: the CPU of the processes that
//! are not the run's (user-space ones, kernel threads, the largest
//! consumers), and the verdict that a scenario was disturbed, by them or by
//! the hypervisor's steal.

use super::ForeignProcesses;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Steal above this share of all CPU time marks a scenario as disturbed.
pub const DISTURBED_STEAL_PCT: f64 = 2.0;
/// CPU of other processes above this share of one CPU marks it as disturbed.
pub const DISTURBED_FOREIGN_CPU_PCT: f64 = 10.0;
/// How many of the other processes a disturbance warning names.
const TOP_FOREIGN: usize = 3;

/// A process that is not the run's, and the CPU it used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command name (/proc/PID/comm).
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

/// CPU of the processes in `after` over the span: growth for those also in
/// `before`, everything for those that started since (processes that began
/// and ended within the span are not seen).
pub(super) fn foreign_cpu(
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
pub(super) fn disturbance(steal_pct: Option<f64>, foreign: Option<&ForeignCpu>) -> Option<String> {
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
