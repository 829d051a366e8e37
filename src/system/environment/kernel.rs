//! The kernel and its scheduler: build-time preemption and timer rate from
//! the kernel configuration, the preemption mode in force, sched_ext,
//! autogroup, transparent hugepages, and the switches of the kernel's
//! accounting (delay accounting, schedstats, PSI, IRQ and steal time).

use super::reader::Reader;
use super::Environment;
use crate::system::{bracketed, kconfig};

/// Fills the kernel and scheduler fields of `env` (its release, version and
/// command line must be read already).
pub(super) fn read_kernel(r: &mut Reader, env: &mut Environment) {
    let config = r.keep(kconfig::read_config(
        &r.roots.proc_root,
        &r.roots.boot_dir,
        env.kernel_release.as_deref(),
    ));
    env.hz = config.as_deref().and_then(kconfig::hz);
    env.preempt_build = env
        .kernel_version
        .as_deref()
        .map(|v| kconfig::preempt_build(v).to_string());
    let debugfs = r.sys("kernel/debug/sched/preempt");
    let mode = env.preempt_build.as_deref().and_then(|build| {
        kconfig::preempt_mode(
            build,
            debugfs.as_deref(),
            env.kernel_cmdline.as_deref(),
            config.as_deref(),
        )
    });
    env.preempt_source = mode.as_ref().map(|m| m.source.to_string());
    env.preempt = mode.map(|m| m.mode);
    env.sched_ext = r.sys("kernel/sched_ext/state");
    env.sched_ext_ops = r.sys("kernel/sched_ext/root/ops").filter(|s| !s.is_empty());
    env.autogroup = r
        .proc_number::<u32>("sys/kernel/sched_autogroup_enabled")
        .map(|v| v != 0);
    read_switches(r, env, config.as_deref());
    env.thp = r
        .sys("kernel/mm/transparent_hugepage/enabled")
        .and_then(|t| bracketed(&t).map(str::to_string));
}

/// Fills the accounting switches of `env` from /proc and the kernel
/// configuration `config`; a switch the kernel lacks is off when the
/// configuration says it is not built, unknown without it.
fn read_switches(r: &mut Reader, env: &mut Environment, config: Option<&str>) {
    let built = |name: &str| config.map(|c| kconfig::config_value(c, name) == Some("y"));
    let sysctl = |r: &mut Reader, rel: &str, option: &str| match r.proc_number::<u32>(rel) {
        Some(value) => Some(value != 0),
        None => built(option).filter(|built| !built),
    };
    env.delayacct = sysctl(r, "sys/kernel/task_delayacct", "TASK_DELAY_ACCT");
    env.schedstats = sysctl(r, "sys/kernel/sched_schedstats", "SCHEDSTATS");
    env.psi = Some(r.roots.proc_root.join("pressure/cpu").exists());
    env.irq_time_acct = built("IRQ_TIME_ACCOUNTING");
    env.paravirt_time_acct = built("PARAVIRT_TIME_ACCOUNTING");
}
