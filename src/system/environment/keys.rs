//! The environment as text: [`KEYS`] is the flat namespace of
//! `--expect KEY=VALUE` and of `report --env`, each key rendering one field;
//! [`mismatches`] checks expectations against it and [`render`] lists it.

use super::{idle, Environment, SwapDevice};

/// One key of the flat namespace of `--expect` and `report --env`.
pub struct Key {
    /// The key as `--expect` and `report --env` spell it.
    pub name: &'static str,
    /// The field rendered as text; `None` when absent.
    pub value: fn(&Environment) -> Option<String>,
}

/// A text field as it is.
fn text(value: &Option<String>) -> Option<String> {
    value.clone()
}

/// A number as Rust prints it.
fn number<T: ToString>(value: &Option<T>) -> Option<String> {
    value.as_ref().map(T::to_string)
}

/// A flag as `yes` or `no`.
fn yes_no(value: &Option<bool>) -> Option<String> {
    value.map(|b| if b { "yes" } else { "no" }.to_string())
}

/// The swap areas, or `none`.
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
        name: "delayacct",
        value: |e| yes_no(&e.delayacct),
    },
    Key {
        name: "schedstats",
        value: |e| yes_no(&e.schedstats),
    },
    Key {
        name: "psi",
        value: |e| yes_no(&e.psi),
    },
    Key {
        name: "irq_time_acct",
        value: |e| yes_no(&e.irq_time_acct),
    },
    Key {
        name: "paravirt_time_acct",
        value: |e| yes_no(&e.paravirt_time_acct),
    },
    Key {
        name: "task_clock",
        value: |e| yes_no(&e.task_clock),
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
        name: "cpuidle_driver",
        value: |e| text(&e.cpuidle_driver),
    },
    Key {
        name: "cpuidle_governor",
        value: |e| text(&e.cpuidle_governor),
    },
    Key {
        name: "idle_states",
        value: |e| e.idle_states.as_deref().map(idle::compact),
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

/// Every key and its value (`absent` for what the kernel lacks), then one
/// `unreadable` pair per file that could not be read.
pub fn pairs(env: &Environment) -> Vec<(String, String)> {
    let values = KEYS.iter().map(|key| {
        let value = (key.value)(env).unwrap_or_else(|| "absent".to_string());
        (key.name.to_string(), value)
    });
    let unreadable = env
        .unreadable
        .iter()
        .map(|note| ("unreadable".to_string(), note.clone()));
    values.chain(unreadable).collect()
}

/// `key: value` lines, aligned, with `absent` for what the kernel lacks.
pub fn render(env: &Environment) -> String {
    let width = KEYS.iter().map(|k| k.name.len()).max().unwrap_or(0) + 1;
    pairs(env)
        .into_iter()
        .map(|(name, value)| format!("{:<width$} {value}\n", format!("{name}:")))
        .collect()
}
