//! The environment a run was made in, recorded in every run document: the
//! kernel and its scheduler settings, the CPUs, memory and swap, the work
//! directory's file system and I/O scheduler, and the machine's load at the
//! start. Every key a kernel may lack is an `Option`: absent is recorded as
//! `null`, never as zero or an error. A file that exists but cannot be read
//! or understood also gives `null`, and its error is kept in `unreadable`.
//!
//! [`KEYS`] is the flat namespace of `--expect KEY=VALUE` and of
//! `report --env`: each key renders one field as text.

use super::procfs::{self, ProcError};
use super::{bracketed, counters, kconfig, mounts, read_optional};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
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

/// One swap area of /proc/swaps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapDevice {
    pub path: String,
    /// `partition` or `file`.
    pub kind: String,
    pub size_bytes: u64,
}

/// What the system was when a run started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    pub feelbench_version: Option<String>,
    pub kernel_release: Option<String>,
    /// /proc/version.
    pub kernel_version: Option<String>,
    /// /proc/cmdline.
    pub kernel_cmdline: Option<String>,
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
    pub autogroup: Option<bool>,
    pub cpu_model: Option<String>,
    /// Number of online CPUs.
    pub cpus: Option<usize>,
    /// The online CPUs as the kernel lists them (`0-1`).
    pub cpus_online: Option<String>,
    /// Whether simultaneous multithreading is active.
    pub smt: Option<bool>,
    pub cpufreq_driver: Option<String>,
    pub governor: Option<String>,
    pub mem_bytes: Option<u64>,
    pub swap_bytes: Option<u64>,
    pub swap_devices: Option<Vec<SwapDevice>>,
    pub swappiness: Option<u32>,
    pub dirty_ratio: Option<u32>,
    pub dirty_background_ratio: Option<u32>,
    /// Transparent hugepages mode (`always`, `madvise`, `never`).
    pub thp: Option<String>,
    /// The run's work directory.
    pub workdir: Option<String>,
    pub workdir_fs: Option<String>,
    /// What is mounted there (`/dev/vda`, `tmpfs`).
    pub workdir_device: Option<String>,
    /// I/O scheduler of the work directory's block device.
    pub io_scheduler: Option<String>,
    /// Whether the CPU reports running under a hypervisor.
    pub hypervisor: Option<bool>,
    /// `v1`, `v2` or `hybrid` (both mounted).
    pub cgroup: Option<String>,
    pub loadavg_1m: Option<f64>,
    pub loadavg_5m: Option<f64>,
    pub loadavg_15m: Option<f64>,
    /// CPU time stolen by the hypervisor over a short sample at the start.
    pub steal_pct: Option<f64>,
    /// Files that exist but could not be read or understood.
    pub unreadable: Vec<String>,
}

/// How long the steal sample at the start lasts.
pub const STEAL_SAMPLE: Duration = Duration::from_millis(200);

/// Collects failures as notes, turning each into an absent value.
struct Reader<'a> {
    roots: &'a Roots,
    unreadable: Vec<String>,
}

impl Reader<'_> {
    fn keep<T>(&mut self, result: Result<Option<T>, ProcError>) -> Option<T> {
        result.unwrap_or_else(|e| {
            self.unreadable.push(e.to_string());
            None
        })
    }

    /// The trimmed text of a /proc file.
    fn proc(&mut self, rel: &str) -> Option<String> {
        let path = self.roots.proc_root.join(rel);
        self.keep(read_optional(&path))
            .map(|t| t.trim().to_string())
    }

    /// The trimmed text of a /sys file.
    fn sys(&mut self, rel: &str) -> Option<String> {
        let path = self.roots.sys_root.join(rel);
        self.keep(read_optional(&path))
            .map(|t| t.trim().to_string())
    }

    /// A number in a /proc file; a file holding something else is noted.
    fn proc_number<T: std::str::FromStr>(&mut self, rel: &str) -> Option<T> {
        let text = self.proc(rel)?;
        let parsed = text.parse().ok();
        if parsed.is_none() {
            self.unreadable.push(
                ProcError::Parse {
                    path: self.roots.proc_root.join(rel),
                    line: text,
                }
                .to_string(),
            );
        }
        parsed
    }
}

/// Reads the environment below `roots`, with `workdir` as the run's work
/// directory, sampling steal over `steal_sample` (zero skips it).
pub fn capture(roots: &Roots, workdir: &Path, steal_sample: Duration) -> Environment {
    let steal_before = counters::read_stat(&roots.proc_root);
    let mut r = Reader {
        roots,
        unreadable: Vec::new(),
    };
    let mut env = Environment {
        feelbench_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        kernel_release: r.proc("sys/kernel/osrelease"),
        kernel_version: r.proc("version"),
        kernel_cmdline: r.proc("cmdline"),
        ..Environment::default()
    };
    read_kernel(&mut r, &mut env);
    read_cpus(&mut r, &mut env);
    read_memory(&mut r, &mut env);
    read_workdir(&mut r, &mut env, workdir);
    read_load(&mut r, &mut env);
    if !steal_sample.is_zero() {
        std::thread::sleep(steal_sample);
        let after = counters::read_stat(&roots.proc_root);
        match (steal_before, after) {
            (Ok(before), Ok(after)) => env.steal_pct = counters::steal_pct(&before.cpu, &after.cpu),
            (Err(e), _) | (_, Err(e)) => r.unreadable.push(e.to_string()),
        }
    }
    env.unreadable = r.unreadable;
    env
}

fn read_kernel(r: &mut Reader, env: &mut Environment) {
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

fn read_cpus(r: &mut Reader, env: &mut Environment) {
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

fn read_memory(r: &mut Reader, env: &mut Environment) {
    let meminfo = r.keep(procfs::read_meminfo(&r.roots.proc_root).map(Some));
    env.mem_bytes = meminfo.as_ref().and_then(|m| m.get("MemTotal"));
    env.swap_bytes = meminfo.as_ref().and_then(|m| m.get("SwapTotal"));
    let path = r.roots.proc_root.join("swaps");
    let swaps = r.keep(read_optional(&path));
    env.swap_devices = swaps.and_then(|text| {
        let parsed = parse_swaps(&path, &text);
        r.keep(parsed.map(Some))
    });
    env.swappiness = r.proc_number("sys/vm/swappiness");
    env.dirty_ratio = r.proc_number("sys/vm/dirty_ratio");
    env.dirty_background_ratio = r.proc_number("sys/vm/dirty_background_ratio");
}

fn read_workdir(r: &mut Reader, env: &mut Environment, workdir: &Path) {
    let dir = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    env.workdir = Some(dir.display().to_string());
    let all = r.keep(mounts::read_mountinfo(&r.roots.proc_root).map(Some));
    let Some(all) = all else { return };
    env.cgroup = mounts::cgroup_version(&all).map(str::to_string);
    let Some(mount) = mounts::mount_of(&all, &dir) else {
        return;
    };
    env.workdir_fs = Some(mount.fs_type.clone());
    env.workdir_device = Some(mount.source.clone());
    env.io_scheduler = r.keep(mounts::io_scheduler(
        &r.roots.sys_root,
        &mount.device_numbers,
    ));
}

fn read_load(r: &mut Reader, env: &mut Environment) {
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
fn count_cpu_list(list: &str) -> Option<usize> {
    list.split(',').try_fold(0, |count, part| {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
        (first <= last).then(|| count + last - first + 1)
    })
}

/// The swap areas of /proc/swaps (sizes there are in KiB).
fn parse_swaps(path: &Path, text: &str) -> Result<Vec<SwapDevice>, ProcError> {
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let size_kib = words.get(2).and_then(|w| w.parse::<u64>().ok());
            match (words.first(), words.get(1), size_kib) {
                (Some(path), Some(kind), Some(kib)) => Ok(SwapDevice {
                    path: path.to_string(),
                    kind: kind.to_string(),
                    size_bytes: kib * 1024,
                }),
                _ => Err(ProcError::Parse {
                    path: path.to_path_buf(),
                    line: line.to_string(),
                }),
            }
        })
        .collect()
}

/// One key of the flat namespace of `--expect` and `report --env`.
pub struct Key {
    pub name: &'static str,
    /// The field rendered as text; `None` when absent.
    pub value: fn(&Environment) -> Option<String>,
}

fn text(value: &Option<String>) -> Option<String> {
    value.clone()
}

fn number<T: ToString>(value: &Option<T>) -> Option<String> {
    value.as_ref().map(T::to_string)
}

fn yes_no(value: &Option<bool>) -> Option<String> {
    value.map(|b| if b { "yes" } else { "no" }.to_string())
}

fn swap_list(devices: &Option<Vec<SwapDevice>>) -> Option<String> {
    devices.as_ref().map(|d| match d.len() {
        0 => "none".to_string(),
        _ => d
            .iter()
            .map(|s| format!("{} ({}, {} bytes)", s.path, s.kind, s.size_bytes))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Every key, in the order `report --env` prints them.
pub const KEYS: &[Key] = &[
    Key {
        name: "feelbench_version",
        value: |e| text(&e.feelbench_version),
    },
    Key {
        name: "kernel_release",
        value: |e| text(&e.kernel_release),
    },
    Key {
        name: "kernel_version",
        value: |e| text(&e.kernel_version),
    },
    Key {
        name: "kernel_cmdline",
        value: |e| text(&e.kernel_cmdline),
    },
    Key {
        name: "preempt_build",
        value: |e| text(&e.preempt_build),
    },
    Key {
        name: "preempt",
        value: |e| text(&e.preempt),
    },
    Key {
        name: "preempt_source",
        value: |e| text(&e.preempt_source),
    },
    Key {
        name: "hz",
        value: |e| number(&e.hz),
    },
    Key {
        name: "sched_ext",
        value: |e| text(&e.sched_ext),
    },
    Key {
        name: "sched_ext_ops",
        value: |e| text(&e.sched_ext_ops),
    },
    Key {
        name: "autogroup",
        value: |e| yes_no(&e.autogroup),
    },
    Key {
        name: "cpu_model",
        value: |e| text(&e.cpu_model),
    },
    Key {
        name: "cpus",
        value: |e| number(&e.cpus),
    },
    Key {
        name: "cpus_online",
        value: |e| text(&e.cpus_online),
    },
    Key {
        name: "smt",
        value: |e| yes_no(&e.smt),
    },
    Key {
        name: "cpufreq_driver",
        value: |e| text(&e.cpufreq_driver),
    },
    Key {
        name: "governor",
        value: |e| text(&e.governor),
    },
    Key {
        name: "mem_bytes",
        value: |e| number(&e.mem_bytes),
    },
    Key {
        name: "swap_bytes",
        value: |e| number(&e.swap_bytes),
    },
    Key {
        name: "swap_devices",
        value: |e| swap_list(&e.swap_devices),
    },
    Key {
        name: "swappiness",
        value: |e| number(&e.swappiness),
    },
    Key {
        name: "dirty_ratio",
        value: |e| number(&e.dirty_ratio),
    },
    Key {
        name: "dirty_background_ratio",
        value: |e| number(&e.dirty_background_ratio),
    },
    Key {
        name: "thp",
        value: |e| text(&e.thp),
    },
    Key {
        name: "workdir",
        value: |e| text(&e.workdir),
    },
    Key {
        name: "workdir_fs",
        value: |e| text(&e.workdir_fs),
    },
    Key {
        name: "workdir_device",
        value: |e| text(&e.workdir_device),
    },
    Key {
        name: "io_scheduler",
        value: |e| text(&e.io_scheduler),
    },
    Key {
        name: "hypervisor",
        value: |e| yes_no(&e.hypervisor),
    },
    Key {
        name: "cgroup",
        value: |e| text(&e.cgroup),
    },
    Key {
        name: "loadavg_1m",
        value: |e| number(&e.loadavg_1m),
    },
    Key {
        name: "loadavg_5m",
        value: |e| number(&e.loadavg_5m),
    },
    Key {
        name: "loadavg_15m",
        value: |e| number(&e.loadavg_15m),
    },
    Key {
        name: "steal_pct",
        value: |e| e.steal_pct.map(|p| format!("{p:.2}")),
    },
];

/// The names of all keys, comma-separated.
pub fn key_names() -> String {
    KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// The key called `name`.
pub fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// Whether an expected value matches the recorded one: equal ignoring
/// case, or the same truth value (`1`, `yes`, `on`, `true` against `0`,
/// `no`, `off`, `false`).
fn matches(expected: &str, actual: &str) -> bool {
    let truth = |s: &str| match s.to_ascii_lowercase().as_str() {
        "1" | "yes" | "on" | "true" => Some(true),
        "0" | "no" | "off" | "false" => Some(false),
        _ => None,
    };
    expected.eq_ignore_ascii_case(actual)
        || truth(expected).is_some_and(|t| truth(actual) == Some(t))
}

/// The mismatches between `expected` (key, value) pairs and `env`, one
/// message each; `expected` keys must be names of [`KEYS`].
pub fn mismatches(env: &Environment, expected: &[(String, String)]) -> Vec<String> {
    expected
        .iter()
        .filter_map(|(name, want)| {
            let key = key(name)?;
            let got = (key.value)(env);
            match got.as_deref() {
                Some(actual) if matches(want, actual) => None,
                actual => Some(format!(
                    "--expect {name}={want}: this system has {name}={}",
                    actual.unwrap_or("absent")
                )),
            }
        })
        .collect()
}

/// `key: value` lines, aligned, with `absent` for what the kernel lacks.
pub fn render(env: &Environment) -> String {
    let width = KEYS.iter().map(|k| k.name.len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for key in KEYS {
        let value = (key.value)(env).unwrap_or_else(|| "absent".to_string());
        out.push_str(&format!("{:<width$} {value}\n", format!("{}:", key.name)));
    }
    for note in &env.unreadable {
        out.push_str(&format!("{:<width$} {note}\n", "unreadable:"));
    }
    out
}

#[cfg(test)]
#[path = "environment_tests.rs"]
mod tests;
