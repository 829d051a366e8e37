//! Per-scenario telemetry: the raw counters taken just before and just after
//! a probe's measurement ([`TelemetrySample`]), and the figures derived from
//! two of them and stored with the scenario ([`ScenarioTelemetry`]):
//! pressure as % of the wall time, /proc/vmstat deltas, context switches and
//! interrupts per second, the CPU split, the CPU of processes that are not
//! the run's, and whether the measurement was disturbed.
//!
//! This file holds the raw side (the samples and the [`Sampler`] that takes
//! them) and the record that pairs them with their figures; [`figures`]
//! derives the figures in one pure function, [`foreign`] accounts for the
//! CPU of other processes, `usage` is what one worker process used, and
//! [`window`] samples the measurement window itself for the late events'
//! context.

pub mod figures;
pub mod foreign;
mod usage;
pub mod window;

pub use usage::{self_usage, ProcessUsage};

use figures::{derive, TelemetryFigures};
// The tests below reach the figure types through `use super::*`.
#[cfg(test)]
use figures::{CpuSplit, PsiFigures, VmstatDeltas};

use super::blockdev::{self, DeviceCounters};
use super::counters::{self, Pressure, ProcessTicks, StatCounters};
use super::procfs::{clock_ticks_per_s, read_process_stat, ProcError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The /proc/vmstat counters telemetry keeps (the rest are not stored).
const VMSTAT_KEYS: &[&str] = &[
    "pswpin",
    "pswpout",
    "pgpgin",
    "pgpgout",
    "pgfault",
    "pgmajfault",
    "allocstall_dma",
    "allocstall_dma32",
    "allocstall_normal",
    "allocstall_movable",
    "allocstall_device",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgscan_khugepaged",
    "pgscan_proactive",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgsteal_khugepaged",
    "pgsteal_proactive",
    "workingset_refault_anon",
    "workingset_refault_file",
    "compact_stall",
    "oom_kill",
    "thp_fault_alloc",
];

/// The CPU time of the processes that are not the run's, at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForeignProcesses {
    /// Clock ticks per second, the unit of the process times.
    pub ticks_per_s: u64,
    /// Every process that is not the run's, kernel threads included.
    pub processes: Vec<ProcessTicks>,
}

/// Raw counters at one moment; each is `None` when this kernel lacks it or
/// it could not be read (the reason is then in `errors`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    /// `CLOCK_MONOTONIC` time the sample was taken.
    pub taken_ns: u64,
    /// /proc/pressure/cpu.
    pub psi_cpu: Option<Pressure>,
    /// /proc/pressure/memory.
    pub psi_memory: Option<Pressure>,
    /// /proc/pressure/io.
    pub psi_io: Option<Pressure>,
    /// The counters of /proc/vmstat listed in `VMSTAT_KEYS` this kernel has.
    pub vmstat: Option<BTreeMap<String, u64>>,
    /// The CPU times, context switches and interrupts of /proc/stat.
    pub stat: Option<StatCounters>,
    /// The counters of the work directory's block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceCounters>,
    /// Why a counter that should be there could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Not stored: what it yields is in the figures.
    #[serde(skip)]
    pub foreign: Option<ForeignProcesses>,
}

/// Takes samples below one /proc root, telling the run's processes (those
/// whose environment holds `FEELBENCH_RUN=<marker>`, and this one) from the rest.
pub struct Sampler {
    proc_root: PathBuf,
    /// `/sys` and `MAJ:MIN` of the block device sampled, if any.
    device: Option<(PathBuf, String)>,
    needle: Vec<u8>,
    me: u32,
    /// Whether a process (pid, start time) is the run's, as first looked up.
    ours: HashMap<u32, bool>,
}

impl Sampler {
    /// A sampler of `proc_root` for the run marked `marker`.
    pub fn new(proc_root: &Path, marker_var: &str, marker: &str) -> Self {
        Self {
            proc_root: proc_root.to_path_buf(),
            device: None,
            needle: format!("{marker_var}={marker}").into_bytes(),
            me: std::process::id(),
            ours: HashMap::new(),
        }
    }

    /// The same sampler, also reading block device `device_numbers`
    /// (`MAJ:MIN`) below `sys_root`.
    pub fn with_device(self, sys_root: &Path, device_numbers: &str) -> Self {
        Self {
            device: Some((sys_root.to_path_buf(), device_numbers.to_string())),
            ..self
        }
    }

    /// Reads every counter now.
    pub fn sample(&mut self, now_ns: u64) -> TelemetrySample {
        let root = self.proc_root.clone();
        let mut errors = Vec::new();
        let psi_cpu = keep(&mut errors, counters::read_pressure(&root, "cpu"));
        let psi_memory = keep(&mut errors, counters::read_pressure(&root, "memory"));
        let psi_io = keep(&mut errors, counters::read_pressure(&root, "io"));
        let vmstat = keep(
            &mut errors,
            counters::read_vmstat(&root).map(|all| {
                Some(
                    all.into_iter()
                        .filter(|(k, _)| VMSTAT_KEYS.contains(&k.as_str()))
                        .collect(),
                )
            }),
        );
        let stat = keep(&mut errors, counters::read_stat(&root).map(Some));
        let device = self.device.as_ref().and_then(|(sys_root, numbers)| {
            keep(&mut errors, blockdev::read_counters(sys_root, numbers))
        });
        let processes = counters::read_processes(&root, |pid| !self.is_ours(pid));
        TelemetrySample {
            taken_ns: now_ns,
            psi_cpu,
            psi_memory,
            psi_io,
            vmstat,
            stat,
            device,
            errors,
            foreign: Some(ForeignProcesses {
                ticks_per_s: clock_ticks_per_s(),
                processes,
            }),
        }
    }

    /// Whether `pid` is this process, one marked as the run's, or a
    /// descendant of either (a program may overwrite its environment with
    /// its process title, as stress-ng's workers do; what the run starts
    /// stays below this process, its subreaper).
    fn is_ours(&mut self, pid: u32) -> bool {
        if pid == self.me {
            return true;
        }
        if let Some(&ours) = self.ours.get(&pid) {
            return ours;
        }
        let environ = std::fs::read(self.proc_root.join(pid.to_string()).join("environ"));
        let marked = environ.is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == self.needle));
        let ours = marked
            || read_process_stat(&self.proc_root, pid)
                .is_ok_and(|stat| stat.ppid > 1 && stat.ppid != pid && self.is_ours(stat.ppid));
        // Only a marked process is remembered: an unmarked pid may be reused
        // by one of ours (and a pid of ours is not reused while the run holds
        // it), and a child of ours that ended by another program.
        if marked {
            self.ours.insert(pid, true);
        }
        ours
    }
}

/// The value of a reader, or `None` with its error noted.
fn keep<T>(errors: &mut Vec<String>, result: Result<Option<T>, ProcError>) -> Option<T> {
    result.unwrap_or_else(|e| {
        errors.push(e.to_string());
        None
    })
}

/// The telemetry of one scenario: raw samples and what they yield.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioTelemetry {
    /// What the two samples yield.
    pub figures: TelemetryFigures,
    /// The sample taken just before the measurement.
    pub before: TelemetrySample,
    /// The sample taken just after it.
    pub after: TelemetrySample,
    /// What sampling the window found (the cgroups' throttling and
    /// pressure) and cost; absent in runs made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<window::WindowTelemetry>,
}

impl ScenarioTelemetry {
    /// Telemetry of the span between `before` and `after`.
    pub fn new(before: TelemetrySample, after: TelemetrySample) -> Self {
        let wall_ns = after.taken_ns.saturating_sub(before.taken_ns);
        Self {
            figures: derive(&before, &after, wall_ns),
            before,
            after,
            window: None,
        }
    }

    /// The same telemetry with what sampling the window found.
    pub fn with_window(self, window: window::WindowTelemetry) -> Self {
        Self {
            window: Some(window),
            ..self
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::system::counters::{CpuTicks, PressureLine};

    /// Pressure totals of `some_us` and, where given, `full_us`.
    pub fn pressure(some_us: u64, full_us: Option<u64>) -> Option<Pressure> {
        let line = |total_us| PressureLine {
            avg10_pct: 0.0,
            avg60_pct: 0.0,
            avg300_pct: 0.0,
            total_us,
        };
        Some(Pressure {
            some: Some(line(some_us)),
            full: full_us.map(line),
        })
    }

    fn stat(user: u64, idle: u64, steal: Option<u64>, ctxt: u64) -> Option<StatCounters> {
        Some(StatCounters {
            cpu: CpuTicks {
                user,
                nice: 0,
                system: 0,
                idle,
                iowait: Some(0),
                irq: Some(0),
                softirq: Some(0),
                steal,
            },
            ctxt: Some(ctxt),
            intr: Some(ctxt * 2),
        })
    }

    fn process(pid: u32, comm: &str, cpu_ticks: u64, kernel_thread: bool) -> ProcessTicks {
        ProcessTicks {
            pid,
            ppid: 1,
            start_ticks: 1000 + pid as u64,
            comm: comm.into(),
            cpu_ticks,
            kernel_thread,
        }
    }

    fn vmstat(pairs: &[(&str, u64)]) -> Option<BTreeMap<String, u64>> {
        Some(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    /// Two samples 2 s apart on a 2-CPU machine with 100 ticks/s.
    fn samples() -> (TelemetrySample, TelemetrySample) {
        let before = TelemetrySample {
            taken_ns: 10_000_000_000,
            psi_cpu: pressure(5_000_000, Some(0)),
            psi_memory: pressure(0, Some(0)),
            psi_io: pressure(100, Some(50)),
            vmstat: vmstat(&[
                ("pswpin", 10),
                ("pgfault", 1000),
                ("allocstall_normal", 1),
                ("allocstall_movable", 2),
                ("pgscan_kswapd", 5),
            ]),
            stat: stat(1000, 5000, Some(100), 50_000),
            device: Some(DeviceCounters {
                read_bytes: 0,
                write_bytes: 0,
                busy_ms: 0,
                in_flight: 0,
            }),
            errors: vec![],
            foreign: Some(ForeignProcesses {
                ticks_per_s: 100,
                processes: vec![
                    process(10, "browser", 500, false),
                    process(11, "kworker/0:1", 7, true),
                ],
            }),
        };
        let after = TelemetrySample {
            taken_ns: 12_000_000_000,
            psi_cpu: pressure(6_000_000, Some(0)),
            psi_memory: pressure(0, Some(0)),
            psi_io: pressure(200_100, Some(100_050)),
            vmstat: vmstat(&[
                ("pswpin", 14),
                ("pgfault", 1500),
                ("allocstall_normal", 3),
                ("allocstall_movable", 4),
                ("pgscan_kswapd", 5),
            ]),
            // 400 ticks: 300 user, 94 idle, 6 steal.
            stat: stat(1300, 5094, Some(106), 54_000),
            device: Some(DeviceCounters {
                read_bytes: 0,
                write_bytes: 100_000_000,
                busy_ms: 1_000,
                in_flight: 2,
            }),
            errors: vec![],
            foreign: Some(ForeignProcesses {
                ticks_per_s: 100,
                processes: vec![
                    process(10, "browser", 540, false),
                    process(11, "kworker/0:1", 9, true),
                    process(12, "updater", 10, false),
                ],
            }),
        };
        (before, after)
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn figures_come_from_counter_growth_over_wall_time() {
        let (before, after) = samples();
        let f = derive(&before, &after, 2_000_000_000);
        assert_eq!(f.interval_ms, 2000.0);
        assert!(close(f.psi.cpu.some_pct, 50.0), "{:?}", f.psi.cpu);
        assert!(close(f.psi.cpu.full_pct, 0.0));
        assert!(close(f.psi.io.some_pct, 10.0));
        assert!(close(f.psi.io.full_pct, 5.0));
        assert_eq!(f.vmstat.swap_in_pages, Some(4));
        assert_eq!(f.vmstat.faults, Some(500));
        assert_eq!(f.vmstat.alloc_stalls, Some(4));
        assert_eq!(f.vmstat.pages_scanned, Some(0));
        assert_eq!(f.vmstat.swap_out_pages, None, "absent key");
        assert_eq!(f.vmstat.pages_reclaimed, None, "absent keys");
        assert!(close(f.context_switches_per_s, 2000.0));
        assert!(close(f.interrupts_per_s, 4000.0));
        assert!(close(f.cpu.user_pct, 75.0));
        assert!(close(f.cpu.idle_pct, 23.5));
        assert!(close(f.cpu.steal_pct, 1.5));
        let foreign = f.foreign.unwrap();
        // 40 + 10 ticks over 2 s at 100 ticks/s: 25 % of one CPU.
        assert!((foreign.cpu_pct - 25.0).abs() < 1e-9);
        assert!((foreign.kernel_threads_cpu_pct - 1.0).abs() < 1e-9);
        let names: Vec<&str> = foreign.top.iter().map(|p| p.comm.as_str()).collect();
        assert_eq!(names, ["browser", "updater"]);
        let warning = f.disturbed.unwrap();
        assert!(warning.contains("25 % of a CPU") && warning.contains("browser (pid 10) 20 %"));
        assert!(!warning.contains("stole"), "1.5 % steal is below the bar");
    }

    #[test]
    fn a_counter_that_went_backwards_gives_none() {
        let (before, mut after) = samples();
        after.psi_cpu = pressure(4_000_000, Some(0));
        after.vmstat = vmstat(&[("pswpin", 9), ("pgfault", 1500), ("allocstall_normal", 0)]);
        let mut s = after.stat.unwrap();
        s.ctxt = Some(1);
        s.cpu.idle = 4000;
        after.stat = Some(s);
        let f = derive(&before, &after, 2_000_000_000);
        assert_eq!(f.psi.cpu.some_pct, None);
        assert!(close(f.psi.cpu.full_pct, 0.0));
        assert_eq!(f.vmstat.swap_in_pages, None);
        assert_eq!(f.vmstat.faults, Some(500));
        assert_eq!(f.vmstat.alloc_stalls, None, "the sum went backwards");
        assert_eq!(f.context_switches_per_s, None);
        assert!(close(f.interrupts_per_s, 4000.0));
        assert_eq!(f.cpu, CpuSplit::default(), "total unknown");
    }

    #[test]
    fn absent_counters_give_none_not_zero() {
        let (mut before, mut after) = samples();
        for s in [&mut before, &mut after] {
            s.psi_cpu = None;
            s.psi_memory = None;
            s.psi_io = None;
            s.vmstat = None;
            s.stat = None;
            s.foreign = None;
        }
        let f = derive(&before, &after, 2_000_000_000);
        assert_eq!(f.psi, PsiFigures::default());
        assert_eq!(f.psi.cpu.some_pct, None);
        assert_eq!(f.vmstat, VmstatDeltas::default());
        assert_eq!(f.context_switches_per_s, None);
        assert_eq!(f.cpu.steal_pct, None);
        assert_eq!((f.foreign, f.disturbed), (None, None));
        assert_eq!(derive(&before, &after, 0).psi.cpu.some_pct, None);
    }

    #[test]
    fn steal_alone_disturbs_and_a_reused_pid_counts_as_new() {
        let (before, mut after) = samples();
        let mut s = after.stat.unwrap();
        s.cpu.steal = Some(120); // 20 of 414 ticks
        after.stat = Some(s);
        let mut foreign = after.foreign.take().unwrap();
        foreign.processes = vec![ProcessTicks {
            start_ticks: 99_999,
            ..process(10, "other", 3, false)
        }];
        after.foreign = Some(foreign);
        let f = derive(&before, &after, 2_000_000_000);
        assert!((f.foreign.as_ref().unwrap().cpu_pct - 1.5).abs() < 1e-9);
        let warning = f.disturbed.unwrap();
        assert!(
            warning.contains("stole 4.8 %") && !warning.contains("other processes"),
            "{warning}"
        );
    }

    #[test]
    fn raw_samples_round_trip_through_json_without_the_process_table() {
        let (before, after) = samples();
        let telemetry = ScenarioTelemetry::new(before, after);
        assert!(telemetry.figures.disturbed.is_some());
        let json = serde_json::to_string(&telemetry).unwrap();
        let back: ScenarioTelemetry = serde_json::from_str(&json).unwrap();
        assert_eq!(back.figures, telemetry.figures);
        assert_eq!(back.before.psi_io, telemetry.before.psi_io);
        assert_eq!(back.after.foreign, None);
    }

    /// The usage agrees, in its units, with the kernel's CPU clock of the
    /// process and its resident size, after 50 ms of CPU and a sleep.
    #[test]
    fn own_usage_is_read_in_its_units() {
        use nix::time::{clock_gettime, ClockId};
        let cpu_ms = || {
            let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).unwrap();
            t.tv_sec() as f64 * 1e3 + t.tv_nsec() as f64 / 1e6
        };
        let start = cpu_ms();
        while cpu_ms() < start + 50.0 {}
        std::thread::sleep(std::time::Duration::from_millis(1));
        let rss_kb: u64 = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let before_ms = cpu_ms();
        let u = self_usage().unwrap();
        let after_ms = cpu_ms();
        // getrusage splits that same clock into user and system time.
        let used_ms = u.user_cpu_ms + u.system_cpu_ms;
        assert!(
            before_ms - 1.0 <= used_ms && used_ms <= after_ms + 1.0,
            "{u:?}: {used_ms} ms of CPU, the clock says {before_ms}..{after_ms} ms"
        );
        assert!(u.voluntary_switches > 0, "{u:?}: slept, yet no switch");
        // The peak is at least what is resident now (counters the kernel
        // sums lazily may differ a little).
        assert!(
            u.max_rss_bytes >= rss_kb * 1024 / 2,
            "{u:?}: peak below the {rss_kb} kB resident now"
        );
    }

    #[test]
    fn sampler_reads_a_fixture_tree_and_skips_marked_processes_and_their_children() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("pressure")).unwrap();
        std::fs::write(
            root.join("pressure/cpu"),
            include_str!("testdata/pressure_cpu"),
        )
        .unwrap();
        std::fs::write(root.join("vmstat"), include_str!("testdata/vmstat_old")).unwrap();
        std::fs::write(root.join("stat"), "cpu  1 2 3 4 5 6 7 oops\n").unwrap();
        // 22 overwrote its environment with its title, as stress-ng's
        // workers do: it is the run's as a child of 20.
        for (pid, ppid, env) in [
            (20, 1, "A=1\0FEELBENCH_RUN=m1\0"),
            (21, 1, "A=1\0"),
            (22, 20, "stress-ng-cpu\0"),
        ] {
            let d = root.join(pid.to_string());
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("environ"), env).unwrap();
            std::fs::write(
                d.join("stat"),
                format!("{pid} (p) S {ppid} 1 1 0 -1 0 0 0 0 0 4 5 0 0 20 0 1 0 77 0"),
            )
            .unwrap();
        }
        let s = Sampler::new(root, "FEELBENCH_RUN", "m1").sample(5);
        assert_eq!(s.taken_ns, 5);
        assert_eq!(s.psi_cpu.unwrap().some.unwrap().total_us, 989_275_295);
        assert_eq!(
            (s.psi_memory, s.psi_io),
            (None, None),
            "no PSI file: absent"
        );
        let vm = s.vmstat.unwrap();
        assert!(vm.contains_key("pgfault") && !vm.contains_key("nr_free_pages"));
        assert_eq!(s.stat, None);
        assert_eq!(s.errors.len(), 1);
        assert!(s.errors[0].contains("stat") && s.errors[0].contains("oops"));
        let pids: Vec<u32> = s.foreign.unwrap().processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [21]);
    }

    #[test]
    fn the_work_directorys_device_gives_its_own_rates() {
        let (before, after) = samples();
        let device = ScenarioTelemetry::new(before, after)
            .figures
            .device
            .unwrap();
        assert_eq!((device.read_mb_s, device.write_mb_s), (0.0, 50.0));
        assert_eq!((device.busy_pct, device.in_flight), (50.0, 2));
    }
}
