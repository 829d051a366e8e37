//! Environment capture on fake /proc and /sys trees: one with files captured
//! on the 2-vCPU KVM guest feelbench is developed on (kernel 6.18), one as an
//! older kernel without sched_ext, SMT control, cpufreq or THP, and damaged ones.

use super::cpus::count_cpu_list;
use super::*;

/// Files of this machine, relative to the fake root (`proc/...`, `sys/...`).
const THIS_MACHINE: &[(&str, &str)] = &[
    ("proc/sys/kernel/osrelease", "6.18.44-fc-v782\n"),
    ("proc/version", "Linux version 6.18.44-fc-v782 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils) 2.46) #1 SMP PREEMPT_DYNAMIC @0\n"),
    ("proc/cmdline", "mitigations=auto,no_guest_host,no_guest_guest console=ttyS0 quiet reboot=k panic=1 nomodule psi=1\n"),
    ("proc/sys/kernel/sched_autogroup_enabled", "1\n"),
    ("proc/sys/kernel/task_delayacct", "0\n"),
    ("proc/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"),
    ("proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme de pse tsc msr hypervisor lahf_lm\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n"),
    ("proc/meminfo", "MemTotal:       24590040 kB\nMemFree:        20000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"),
    ("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"),
    ("proc/sys/vm/swappiness", "60\n"),
    ("proc/sys/vm/dirty_ratio", "20\n"),
    ("proc/sys/vm/dirty_background_ratio", "10\n"),
    ("proc/loadavg", "2.72 4.90 4.60 1/82 19680\n"),
    ("proc/stat", "cpu  351987 0 144451 770865 41738 0 2867 8224 0 0\n"),
    ("proc/self/mountinfo", "22 27 0:21 / /proc rw,relatime - proc proc rw\n27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"),
    ("sys/devices/system/cpu/online", "0-1\n"),
    ("sys/devices/system/cpu/smt/active", "0\n"),
    ("sys/devices/system/cpu/cpuidle/current_driver", "haltpoll\n"),
    ("sys/devices/system/cpu/cpuidle/current_governor", "haltpoll\n"),
    ("sys/devices/system/cpu/cpuidle/current_governor_ro", "haltpoll\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "0\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state0/disable", "0\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/name", "haltpoll idle\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "1\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "0\n"),
    ("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n"),
    ("sys/dev/block/254:0/queue/scheduler", "none [mq-deadline] kyber bfq \n"),
    ("boot/config-6.18.44-fc-v782", "CONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_TASK_DELAY_ACCT=y\n# CONFIG_SCHEDSTATS is not set\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\nCONFIG_PARAVIRT_TIME_ACCOUNTING=y\n"),
];

/// A kernel of ten years ago with swap: no sched_ext, no SMT control, no
/// cpufreq, no THP, no kernel configuration, no steal column.
const OLD_KERNEL: &[(&str, &str)] = &[
    ("proc/sys/kernel/osrelease", "4.4.0\n"),
    ("proc/version", "Linux version 4.4.0 (gcc 5.4) #1 SMP Mon Jan 1\n"),
    ("proc/cmdline", "ro quiet\n"),
    ("proc/cpuinfo", "processor\t: 0\nmodel name\t: Intel Xeon\nflags\t\t: fpu vme\n"),
    ("proc/meminfo", "MemTotal:       1024000 kB\nSwapTotal:       524284 kB\n"),
    ("proc/swaps", "Filename\t\t\t\tType\t\tSize\tUsed\tPriority\n/dev/sda2                               partition\t524284\t0\t-1\n"),
    ("proc/loadavg", "0.00 0.01 0.05 1/82 100\n"),
    ("proc/stat", "cpu  10 0 5 100\n"),
    ("proc/self/mountinfo", "20 1 0:19 / / rw - tmpfs rootfs rw\n"),
    ("sys/devices/system/cpu/online", "0\n"),
];

fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Roots) {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let roots = Roots {
        proc_root: dir.path().join("proc"),
        sys_root: dir.path().join("sys"),
        boot_dir: dir.path().join("boot"),
    };
    (dir, roots)
}

#[test]
fn this_machine_is_read_in_full() {
    let (_dir, roots) = tree(THIS_MACHINE);
    let env = capture(&roots, Path::new("/work/run"));
    assert_eq!(env.unreadable, Vec::<String>::new());
    assert_eq!(env.kernel_release.as_deref(), Some("6.18.44-fc-v782"));
    assert_eq!(env.preempt_build.as_deref(), Some("PREEMPT_DYNAMIC"));
    assert_eq!(env.preempt.as_deref(), Some("none"));
    assert_eq!(env.preempt_source.as_deref(), Some("config"));
    assert_eq!(env.hz, Some(250));
    assert_eq!(
        (env.delayacct, env.schedstats, env.psi),
        (Some(false), Some(false), Some(true))
    );
    assert_eq!(
        (env.irq_time_acct, env.paravirt_time_acct),
        (Some(false), Some(true))
    );
    assert_eq!(
        (env.sched_ext.clone(), env.sched_ext_ops.clone()),
        (None, None)
    );
    assert_eq!(env.autogroup, Some(true));
    assert_eq!(env.cpu_model.as_deref(), Some("AMD EPYC"));
    assert_eq!(
        (env.cpus, env.smt, env.hypervisor),
        (Some(2), Some(false), Some(true))
    );
    assert_eq!(
        (env.cpufreq_driver.clone(), env.governor.clone()),
        (None, None)
    );
    assert_eq!(env.mem_bytes, Some(24_590_040 * 1024));
    assert_eq!(env.swap_bytes, Some(0));
    assert_eq!(env.swap_devices, Some(vec![]));
    assert_eq!(
        (env.swappiness, env.dirty_ratio, env.dirty_background_ratio),
        (Some(60), Some(20), Some(10))
    );
    assert_eq!(env.thp.as_deref(), Some("madvise"));
    assert_eq!(env.workdir_fs.as_deref(), Some("ext4"));
    assert_eq!(env.workdir_device.as_deref(), Some("/dev/vda"));
    assert_eq!(env.io_scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(env.cgroup.as_deref(), Some("hybrid"));
    assert_eq!(env.loadavg_1m, Some(2.72));
    assert_eq!(env.steal_pct, None, "not sampled");
    assert_eq!(env.cpuidle_driver.as_deref(), Some("haltpoll"));
    assert_eq!(env.cpuidle_governor.as_deref(), Some("haltpoll"));
    let states = env.idle_states.clone().unwrap();
    let names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["POLL", "haltpoll idle"]);
    assert_eq!(
        states[1],
        IdleState {
            name: "haltpoll idle".into(),
            exit_latency_us: 1,
            disabled: false
        }
    );
    let text = render(&env);
    assert!(
        text.contains("kernel_release:         6.18.44-fc-v782\n"),
        "{text}"
    );
    assert!(text.contains("governor:               absent\n"), "{text}");
    assert!(text.contains("swap_devices:           none\n"), "{text}");
}

#[test]
fn an_old_kernel_gives_absent_keys_not_errors() {
    let (_dir, roots) = tree(OLD_KERNEL);
    let mut env = capture(&roots, Path::new("/home"));
    StealSample::begin(&roots, Duration::from_millis(1)).end(&mut env);
    assert_eq!(env.unreadable, Vec::<String>::new());
    assert_eq!(env.preempt_build.as_deref(), Some("none"));
    assert_eq!((env.preempt.clone(), env.hz), (None, None));
    assert_eq!(
        (env.sched_ext.clone(), env.autogroup, env.smt),
        (None, None, None)
    );
    assert_eq!((env.governor.clone(), env.thp.clone()), (None, None));
    assert_eq!((env.cpus, env.hypervisor), (Some(1), Some(false)));
    // No configuration: switches the kernel lacks are unknown, not off.
    assert_eq!(
        (env.delayacct, env.schedstats, env.irq_time_acct),
        (None, None, None)
    );
    assert_eq!(env.psi, Some(false));
    assert_eq!(env.swappiness, None);
    assert_eq!(
        env.swap_devices,
        Some(vec![SwapDevice {
            path: "/dev/sda2".into(),
            kind: "partition".into(),
            size_bytes: 524_284 * 1024,
        }])
    );
    assert_eq!(env.workdir_fs.as_deref(), Some("tmpfs"));
    assert_eq!((env.io_scheduler.clone(), env.cgroup.clone()), (None, None));
    assert_eq!(env.steal_pct, None, "no steal column");
    assert_eq!(
        (env.cpuidle_driver.clone(), env.cpuidle_governor.clone()),
        (None, None)
    );
    assert_eq!(env.idle_states, None);
}

/// CPU 0's idle state `n` as (file, text) pairs.
fn idle_state(n: u32, name: &str, latency: &str, disable: &str) -> Vec<(String, String)> {
    let dir = format!("sys/devices/system/cpu/cpu0/cpuidle/state{n}");
    [("name", name), ("latency", latency), ("disable", disable)]
        .iter()
        .map(|(file, text)| (format!("{dir}/{file}"), format!("{text}\n")))
        .collect()
}

/// A tree of `files` plus the owned pairs `more`.
fn tree_with(files: &[(&str, &str)], more: &[(String, String)]) -> (tempfile::TempDir, Roots) {
    let mut all = files.to_vec();
    all.extend(more.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    tree(&all)
}

#[test]
fn idle_states_come_in_numeric_order_with_the_read_only_governor() {
    let mut states = Vec::new();
    for n in 0..11 {
        states.extend(idle_state(n, &format!("C{n}"), &format!("{}", n * 10), "0"));
    }
    states.extend(idle_state(11, "C11", "200", "1"));
    let governor_ro = [(
        "sys/devices/system/cpu/cpuidle/current_governor_ro",
        "menu\n",
    )];
    let (_dir, roots) = tree_with(&governor_ro, &states);
    let env = capture(&roots, Path::new("/"));
    assert_eq!(env.cpuidle_governor.as_deref(), Some("menu"));
    assert_eq!(env.cpuidle_driver, None);
    let states = env.idle_states.clone().unwrap();
    assert_eq!(states.len(), 12);
    assert_eq!(
        (states[10].name.as_str(), states[10].exit_latency_us),
        ("C10", 100)
    );
    assert!(states[11].disabled && !states[10].disabled);
    let text = key("idle_states")
        .map(|k| (k.value)(&env))
        .unwrap()
        .unwrap();
    assert!(text.starts_with("C0:0,C1:10,C2:20,"), "{text}");
    assert!(text.ends_with(",C10:100,C11:200:off"), "{text}");
}

#[test]
fn a_cpu_without_idle_states_has_none_listed() {
    let (dir, roots) = tree(&[]);
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu/cpu0/cpuidle")).unwrap();
    let env = capture(&roots, Path::new("/"));
    assert_eq!(env.idle_states, Some(vec![]));
    let text = key("idle_states").map(|k| (k.value)(&env)).unwrap();
    assert_eq!(text.as_deref(), Some("none"));
}

#[test]
fn damaged_idle_states_are_noted_and_absent() {
    let mut states = idle_state(0, "POLL", "0", "0");
    states.extend(idle_state(1, "C1", "lots", "0"));
    let (_dir, roots) = tree_with(&[], &states);
    let env = capture(&roots, Path::new("/"));
    assert_eq!(env.idle_states, None);
    let notes = env.unreadable.join("\n");
    assert!(
        notes.contains("state1/latency") && notes.contains("lots"),
        "{notes}"
    );

    let mut states = idle_state(0, "POLL", "0", "0");
    states.retain(|(path, _)| !path.ends_with("disable"));
    let (_dir, roots) = tree_with(&[], &states);
    let env = capture(&roots, Path::new("/"));
    assert_eq!(env.idle_states, None);
    let notes = env.unreadable.join("\n");
    assert!(notes.contains("state0/disable"), "{notes}");
}

#[test]
fn an_empty_tree_gives_absent_for_everything_but_the_version() {
    let (_dir, roots) = tree(&[]);
    let env = capture(&roots, Path::new("/"));
    assert_eq!(env.kernel_release, None);
    assert_eq!(env.cpus, None);
    // meminfo and mountinfo are always there on Linux: their absence is noted.
    assert_eq!(env.unreadable.len(), 2, "{:?}", env.unreadable);
}

#[test]
fn damaged_files_are_noted_and_absent() {
    let mut files = THIS_MACHINE.to_vec();
    files.retain(|(p, _)| !p.ends_with("swappiness") && !p.ends_with("swaps"));
    files.retain(|(p, _)| !p.ends_with("loadavg") && !p.ends_with("online"));
    files.push(("proc/sys/vm/swappiness", "sixty\n"));
    files.push(("proc/swaps", "Filename Type Size\n/swapfile file lots\n"));
    files.push(("proc/loadavg", "2.72\n"));
    files.push(("sys/devices/system/cpu/online", "1-0\n"));
    let (_dir, roots) = tree(&files);
    let env = capture(&roots, Path::new("/"));
    assert_eq!(env.swappiness, None);
    assert_eq!(env.swap_devices, None);
    assert_eq!(env.loadavg_1m, None);
    assert_eq!(env.cpus, None);
    let notes = env.unreadable.join("\n");
    assert!(
        notes.contains("swappiness") && notes.contains("sixty"),
        "{notes}"
    );
    assert!(notes.contains("/swapfile file lots"), "{notes}");
    assert!(notes.contains("loadavg"), "{notes}");
}

#[test]
fn cpu_lists_are_counted() {
    assert_eq!(count_cpu_list("0-1"), Some(2));
    assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
    assert_eq!(count_cpu_list("x"), None);
}

#[test]
fn expectations_name_the_key_the_wanted_and_the_actual_value() {
    let (_dir, roots) = tree(THIS_MACHINE);
    let env = capture(&roots, Path::new("/"));
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let ok = pairs(&[
        ("cpus", "2"),
        ("hz", "250"),
        ("autogroup", "1"),
        ("thp", "MADVISE"),
        ("cpuidle_driver", "haltpoll"),
        ("cpuidle_governor", "haltpoll"),
        ("idle_states", "POLL:0,haltpoll idle:1"),
    ]);
    assert_eq!(mismatches(&env, &ok), Vec::<String>::new());
    let bad = mismatches(
        &env,
        &pairs(&[("cpus", "9999"), ("governor", "performance")]),
    );
    assert_eq!(
        bad,
        [
            "--expect cpus=9999: this system has cpus=2",
            "--expect governor=performance: this system has governor=absent",
        ]
    );
    assert!(key("nosuchkey").is_none());
    assert!(key_names().contains("sched_ext, "));
}

#[test]
fn an_old_document_without_environment_reads_as_all_absent() {
    let env: Environment = serde_json::from_str("{}").unwrap();
    assert_eq!(env, Environment::default());
    assert!(render(&env).contains("kernel_release:         absent\n"));
}
