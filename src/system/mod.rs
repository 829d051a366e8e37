//! What feelbench knows about the machine it runs on, and the thin layer over
//! the system it needs (atomic file writes, cgroups, swap files, SysV message
//! queues). Every reader takes the root of the /proc (or /sys) tree, so tests
//! can feed it captured files. It uses no other module of feelbench.

pub mod atomic;
pub mod blockdev;
pub mod cgroup;
pub mod counters;
pub mod cpulist;
pub mod delayacct;
pub mod detached;
pub mod environment;
pub mod kconfig;
pub mod loopback;
pub mod mounts;
pub mod msgqueue;
pub mod noise;
pub mod perf_event;
pub mod pmqos;
pub mod process_tree;
pub mod procfs;
pub mod sched_trace;
pub mod setting;
pub mod swap;
pub mod task_clock;
pub mod taskstats;
pub mod telemetry;
pub mod writeback;

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Says `SKIPPED <test>: <reason>` past the harness's capture of
/// eprintln!, in one write, as tests/suite/common's `skip` (CI lists them).
#[cfg(test)]
pub(crate) fn skip(reason: &str) {
    use std::io::Write as _;
    let test = std::thread::current();
    let line = format!("SKIPPED {}: {reason}\n", test.name().unwrap_or_default());
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// The text of the /proc or /sys file `path`; `Ok(None)` when the kernel
/// does not have it (the file or its directory does not exist).
pub fn read_optional(path: &Path) -> Result<Option<String>, procfs::ProcError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(procfs::ProcError::Read {
            path: path.to_path_buf(),
            error,
        }),
    }
}

/// The chosen word of a sysfs choice list such as `always [madvise] never`
/// (or `none voluntary (full) lazy`, as debugfs writes it).
pub fn bracketed(text: &str) -> Option<&str> {
    text.split_whitespace().find_map(|word| {
        word.strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .or_else(|| word.strip_prefix('(')?.strip_suffix(')'))
    })
}

/// A short description of the system a run was made on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemInfo {
    pub kernel_release: String,
    pub kernel_version: String,
    pub hostname: String,
    /// CPU model name; `None` when /proc/cpuinfo does not say.
    pub cpu_model: Option<String>,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// Total memory; `None` when /proc/meminfo cannot be read.
    pub mem_bytes: Option<u64>,
    /// Total swap; `None` when /proc/meminfo cannot be read.
    pub swap_bytes: Option<u64>,
}

/// Describes the running system, reading /proc below `proc_root`.
pub fn describe(proc_root: &Path) -> SystemInfo {
    let uname = nix::sys::utsname::uname().ok();
    let field = |get: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
        uname
            .as_ref()
            .map(|u| get(u).to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let meminfo = procfs::read_meminfo(proc_root).ok();
    SystemInfo {
        kernel_release: field(|u| u.release()),
        kernel_version: field(|u| u.version()),
        hostname: field(|u| u.nodename()),
        cpu_model: procfs::read_cpu_model(proc_root).ok().flatten(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        mem_bytes: meminfo.as_ref().and_then(|m| m.get("MemTotal")),
        swap_bytes: meminfo.as_ref().and_then(|m| m.get("SwapTotal")),
    }
}
