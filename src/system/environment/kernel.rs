//! The kernel and its scheduler: build-time preemption and timer rate from
//! the kernel configuration, the preemption mode in force, sched_ext,
//! autogroup, and transparent hugepages.

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
    env.thp = r
        .sys("kernel/mm/transparent_hugepage/enabled")
        .and_then(|t| bracketed(&t).map(str::to_string));
}
