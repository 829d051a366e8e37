//! The CPUs and how busy they were at the start: model, hypervisor flag,
//! online CPUs, SMT, cpufreq driver and governor and load averages (the
//! share of CPU time the hypervisor stole is sampled by `StealSample`).

use super::reader::Reader;
use super::Environment;
use crate::system::procfs::{self, ProcError};

/// Fills the CPU fields of `env`.
pub(super) fn read_cpus(r: &mut Reader, env: &mut Environment) {
    let cpuinfo = r.proc("cpuinfo");
    if cpuinfo.is_some() {
        env.cpu_model = r.keep(procfs::read_cpu_model(&r.roots.proc_root));
    }
    env.hypervisor = cpuinfo.as_deref().and_then(hypervisor_flag);
    env.cpus_online = r.sys("devices/system/cpu/online");
    env.cpus = env.cpus_online.as_deref().and_then(count_cpu_list);
    env.smt = r.sys("devices/system/cpu/smt/active").map(|s| s == "1");
    env.cpufreq_driver = r.sys("devices/system/cpu/cpu0/cpufreq/scaling_driver");
    env.governor = r.sys("devices/system/cpu/cpu0/cpufreq/scaling_governor");
}

/// Fills the load averages of `env` from /proc/loadavg.
pub(super) fn read_load(r: &mut Reader, env: &mut Environment) {
    let Some(text) = r.proc("loadavg") else {
        return;
    };
    let numbers: Vec<Option<f64>> = text
        .split_whitespace()
        .take(3)
        .map(|w| w.parse().ok())
        .collect();
    if numbers.len() < 3 || numbers.iter().any(Option::is_none) {
        let path = r.roots.proc_root.join("loadavg");
        r.unreadable
            .push(ProcError::Parse { path, line: text }.to_string());
        return;
    }
    (env.loadavg_1m, env.loadavg_5m, env.loadavg_15m) = (numbers[0], numbers[1], numbers[2]);
}

/// Whether the `flags` line of /proc/cpuinfo has `hypervisor`; `None` when
/// there is no flags line (as on ARM).
fn hypervisor_flag(cpuinfo: &str) -> Option<bool> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "flags").then(|| value.split_whitespace().any(|f| f == "hypervisor"))
    })
}

/// The number of CPUs in a list such as `0-3,8,10-11`; `None` when malformed.
pub(super) fn count_cpu_list(list: &str) -> Option<usize> {
    list.split(',').try_fold(0, |count, part| {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
        (first <= last).then(|| count + last - first + 1)
    })
}
