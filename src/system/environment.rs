//! The environment a run was made in, recorded in every run document: the
//! kernel and its scheduler settings, the CPUs and their idle states, memory
//! and swap, the work directory's file system and I/O scheduler, and the
//! machine's load at the start. Every key a kernel may lack is an `Option`:
//! absent is recorded as `null`, never as zero or an error. A file that
//! exists but cannot be read or understood also gives `null`, and its error
//! is kept in `unreadable`.
//!
//! [`keys::KEYS`] is the flat namespace of `--expect KEY=VALUE` and of
//! `report --env`: each key renders one field as text.
//!
//! This file holds the document and the order of its capture; each part is
//! read by a module of its own (`kernel`, `cpus`, `idle`, `memory`, `workdir`)
//! through one `Reader`, and `keys` renders the result.

mod cpus;
mod idle;
mod kernel;
pub mod keys;
mod memory;
mod reader;
mod workdir;

pub use idle::IdleState;
pub use keys::{key, key_names, mismatches, pairs, render};
pub use memory::SwapDevice;

use super::counters;
use super::task_clock::TaskClock;
use reader::Reader;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

/// The directories the environment is read from.
#[derive(Debug, Clone)]
pub struct Roots {
    /// Where /proc is.
    pub proc_root: PathBuf,
    /// Where /sys is.
    pub sys_root: PathBuf,
    /// Where the kernel configurations `config-RELEASE` are (/boot).
    pub boot_dir: PathBuf,
}

impl Roots {
    /// The running system's /proc, /sys and /boot.
    pub fn system() -> Self {
        Self {
            proc_root: PathBuf::from("/proc"),
            sys_root: PathBuf::from("/sys"),
            boot_dir: PathBuf::from("/boot"),
        }
    }
}

/// What the system was when a run started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// The feelbench that made the run.
    pub feelbench_version: Option<String>,
    /// /proc/sys/kernel/osrelease (`6.18.44`).
    pub kernel_release: Option<String>,
    /// /proc/version.
    pub kernel_version: Option<String>,
    /// /proc/cmdline.
    pub kernel_cmdline: Option<String>,
    /// The machine's architecture (`uname -m`: `x86_64`, `aarch64`).
    pub arch: Option<String>,
    /// `PREEMPT_RT`, `PREEMPT_DYNAMIC`, `PREEMPT` or `none`.
    pub preempt_build: Option<String>,
    /// The preemption mode in force (`none`, `voluntary`, `full`, `lazy`).
    pub preempt: Option<String>,
    /// Where `preempt` was learnt: `debugfs`, `cmdline` or `config`.
    pub preempt_source: Option<String>,
    /// Timer ticks per second (CONFIG_HZ), when the configuration is readable.
    pub hz: Option<u32>,
    /// /sys/kernel/sched_ext/state (`enabled`, `disabled`, ...).
    pub sched_ext: Option<String>,
    /// The name of the sched_ext scheduler loaded.
    pub sched_ext_ops: Option<String>,
    /// Whether the scheduler groups tasks by session (sched_autogroup_enabled).
    pub autogroup: Option<bool>,
    /// Delay accounting (kernel.task_delayacct) as it was for the run's
    /// workers: a run as root switches it on before they start.
    pub delayacct: Option<bool>,
    /// Scheduler statistics (kernel.sched_schedstats; off when the kernel
    /// is built without CONFIG_SCHEDSTATS).
    pub schedstats: Option<bool>,
    /// Whether pressure stall information (/proc/pressure) is there.
    pub psi: Option<bool>,
    /// CONFIG_IRQ_TIME_ACCOUNTING: IRQ time kept out of the tasks' CPU
    /// clocks (not out of their perf task clocks: `measure::cpu_time`).
    pub irq_time_acct: Option<bool>,
    /// CONFIG_PARAVIRT_TIME_ACCOUNTING: host steal kept out of the tasks'
    /// CPU clocks (not out of their perf task clocks: `measure::cpu_time`).
    pub paravirt_time_acct: Option<bool>,
    /// Whether a thread may count its own CPU time with perf's task clock
    /// (`perf_event_paranoid` at most 2, or CAP_PERFMON): the frames' work
    /// and the late split read it; without it they read the thread's CPU
    /// clock, whose every reading makes the scheduler account the thread,
    /// which under CPU load can lower the wake-up latency measured
    /// (`measure::work`). Learnt by opening one, not from a file.
    pub task_clock: Option<bool>,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Number of online CPUs.
    pub cpus: Option<usize>,
    /// The online CPUs as the kernel lists them (`0-1`).
    pub cpus_online: Option<String>,
    /// Whether simultaneous multithreading is active.
    pub smt: Option<bool>,
    /// The cpufreq driver of CPU 0.
    pub cpufreq_driver: Option<String>,
    /// The cpufreq governor of CPU 0.
    pub governor: Option<String>,
    /// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`).
    pub cpuidle_driver: Option<String>,
    /// The cpuidle governor (`menu`, `teo`, `ladder`, `haltpoll`).
    pub cpuidle_governor: Option<String>,
    /// CPU 0's idle states, shallowest first.
    pub idle_states: Option<Vec<IdleState>>,
    /// Total memory (MemTotal).
    pub mem_bytes: Option<u64>,
    /// Total swap (SwapTotal).
    pub swap_bytes: Option<u64>,
    /// The swap areas of /proc/swaps.
    pub swap_devices: Option<Vec<SwapDevice>>,
    /// /proc/sys/vm/swappiness.
    pub swappiness: Option<u32>,
    /// /proc/sys/vm/dirty_ratio, in % of memory.
    pub dirty_ratio: Option<u32>,
    /// /proc/sys/vm/dirty_background_ratio, in % of memory.
    pub dirty_background_ratio: Option<u32>,
    /// Transparent hugepages mode (`always`, `madvise`, `never`).
    pub thp: Option<String>,
    /// The run's work directory.
    pub workdir: Option<String>,
    /// The file system type of the work directory's mount.
    pub workdir_fs: Option<String>,
    /// What is mounted there (`/dev/vda`, `tmpfs`).
    pub workdir_device: Option<String>,
    /// I/O scheduler of the work directory's block device.
    pub io_scheduler: Option<String>,
    /// Whether the CPU reports running under a hypervisor.
    pub hypervisor: Option<bool>,
    /// `v1`, `v2` or `hybrid` (both mounted).
    pub cgroup: Option<String>,
    /// Load average over 1 minute, from /proc/loadavg.
    pub loadavg_1m: Option<f64>,
    /// Load average over 5 minutes.
    pub loadavg_5m: Option<f64>,
    /// Load average over 15 minutes.
    pub loadavg_15m: Option<f64>,
    /// CPU time stolen by the hypervisor over a short sample at the start.
    pub steal_pct: Option<f64>,
    /// Files that exist but could not be read or understood.
    pub unreadable: Vec<String>,
}

/// How long the steal sample at the start lasts.
pub const STEAL_SAMPLE: Duration = Duration::from_millis(200);

/// Reads the environment below `roots`, with `workdir` as the run's work
/// directory; its steal is sampled apart ([`StealSample`]).
pub fn capture(roots: &Roots, workdir: &Path) -> Environment {
    let mut r = Reader {
        roots,
        unreadable: Vec::new(),
    };
    let mut env = Environment {
        feelbench_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        kernel_release: r.proc("sys/kernel/osrelease"),
        kernel_version: r.proc("version"),
        kernel_cmdline: r.proc("cmdline"),
        arch: nix::sys::utsname::uname()
            .ok()
            .map(|u| u.machine().to_string_lossy().into_owned()),
        task_clock: Some(TaskClock::open().is_ok()),
        ..Environment::default()
    };
    kernel::read_kernel(&mut r, &mut env);
    cpus::read_cpus(&mut r, &mut env);
    idle::read_idle(&mut r, &mut env);
    memory::read_memory(&mut r, &mut env);
    workdir::read_workdir(&mut r, &mut env, workdir);
    cpus::read_load(&mut r, &mut env);
    env.unreadable = r.unreadable;
    env
}

/// The hypervisor's steal over the start of a run, sampled on a thread of
/// its own: begun as the environment is read, taken in once the run is
/// over, so the sample costs the run no wait of its own.
pub struct StealSample {
    sampler: std::io::Result<JoinHandle<Result<Option<f64>, String>>>,
}

impl StealSample {
    /// Reads /proc/stat below `roots` now and again `length` later.
    pub fn begin(roots: &Roots, length: Duration) -> Self {
        let proc_root = roots.proc_root.clone();
        let sampler = std::thread::Builder::new()
            .name("steal-sample".into())
            .spawn(move || {
                let before = counters::read_stat(&proc_root).map_err(|e| e.to_string())?;
                std::thread::sleep(length);
                let after = counters::read_stat(&proc_root).map_err(|e| e.to_string())?;
                Ok(counters::steal_pct(&before.cpu, &after.cpu))
            });
        Self { sampler }
    }

    /// Fills `env.steal_pct` with the sample (waiting for what is left of
    /// it), or `env.unreadable` with why there is none.
    pub fn end(self, env: &mut Environment) {
        let sampled = match self.sampler {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|_| Err("the steal sample's thread panicked".into())),
            Err(e) => Err(format!("no thread for the steal sample: {e}")),
        };
        match sampled {
            Ok(steal) => env.steal_pct = steal,
            Err(e) => env.unreadable.push(e),
        }
    }
}

#[cfg(test)]
mod tests;
