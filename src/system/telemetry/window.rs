//! Telemetry over the measurement window, for joining to late events by
//! time: a thread of the orchestrator ([`WindowSampler`]) reads, every
//! 100 ms, each CPU's time split (/proc/stat), the system's pressure, the
//! reclaim and swap-in counters of /proc/vmstat and the counters of the
//! cgroups the probe and the loads are in ([`WindowSample`]), and times
//! its own CPU. What stays in the run document is [`WindowTelemetry`]: the
//! cgroups' throttling and pressure growth over the window and what the
//! sampling cost; the samples themselves are joined to the late events
//! (`figures::late_context`) and dropped.

use crate::system::cgroup::watch::{GroupCounters, GroupFiles, WatchedGroup};
use crate::system::counters::{read_pressure, read_stat_per_cpu, CpuTicks, Pressure};
use crate::system::procfs::ProcError;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the window is sampled.
pub const EVERY: Duration = Duration::from_millis(100);

/// The reclaim and swap counters of /proc/vmstat a late event's context
/// uses, each `None` where this kernel has none of its keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reclaim {
    /// Direct reclaim entered by an allocation (`allocstall_*` summed).
    pub alloc_stalls: Option<u64>,
    /// Direct compaction entered by an allocation.
    pub compact_stalls: Option<u64>,
    /// Pages swapped in.
    pub swap_ins: Option<u64>,
    /// Evicted pages faulted back (`workingset_refault*` summed).
    pub refaults: Option<u64>,
}

impl Reclaim {
    /// Reads `<proc_root>/vmstat`, parsing only the lines it keeps (the
    /// sampler reads it ten times a second: a map of all ~180 counters
    /// was most of a sample's cost).
    fn read(proc_root: &Path) -> Result<Self, ProcError> {
        let path = proc_root.join("vmstat");
        let text = std::fs::read_to_string(&path).map_err(|error| ProcError::Read {
            path: path.clone(),
            error,
        })?;
        Self::parse(&text).map_err(|line| ProcError::Parse {
            path,
            line: line.to_string(),
        })
    }

    /// The counters of a /proc/vmstat text; `Err` with a kept line that is
    /// not `KEY NUMBER`.
    fn parse(text: &str) -> Result<Self, &str> {
        let mut reclaim = Self::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(' ') else {
                continue;
            };
            let slot = match key {
                "compact_stall" => &mut reclaim.compact_stalls,
                "pswpin" => &mut reclaim.swap_ins,
                _ if key.starts_with("allocstall") => &mut reclaim.alloc_stalls,
                _ if key.starts_with("workingset_refault") => &mut reclaim.refaults,
                _ => continue,
            };
            let value: u64 = value.trim().parse().map_err(|_| line)?;
            *slot = Some(slot.unwrap_or(0) + value);
        }
        Ok(reclaim)
    }
}

/// The counters read at one moment of the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowSample {
    /// `CLOCK_MONOTONIC` time it was taken, ns.
    pub taken_ns: u64,
    /// Each CPU's time split, by CPU number (empty when /proc/stat could
    /// not be read).
    pub cpus: Vec<Option<CpuTicks>>,
    /// The system's pressure: cpu, memory, io.
    pub pressure: SystemPressure,
    pub reclaim: Reclaim,
    /// The counters of each watched group, in [`WindowSamples::groups`]'
    /// order; `None` where they could not be read.
    pub groups: Vec<Option<GroupCounters>>,
}

/// The three pressure files of the system (or of a cgroup).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SystemPressure {
    pub cpu: Option<Pressure>,
    pub memory: Option<Pressure>,
    pub io: Option<Pressure>,
}

/// How much the `total` of each pressure line grew over a span, µs;
/// `None` where a file or line does not exist or a counter went backwards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PressureGrowth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_some_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_full_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_some_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_full_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_some_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_full_us: Option<u64>,
}

impl PressureGrowth {
    /// The growth from `before` to `after`.
    pub fn between(before: &SystemPressure, after: &SystemPressure) -> Self {
        fn grew(before: Option<Pressure>, after: Option<Pressure>, full: bool) -> Option<u64> {
            let line = |p: Pressure| if full { p.full } else { p.some };
            let (b, a) = (line(before?)?, line(after?)?);
            a.total_us.checked_sub(b.total_us)
        }
        Self {
            cpu_some_us: grew(before.cpu, after.cpu, false),
            cpu_full_us: grew(before.cpu, after.cpu, true),
            memory_some_us: grew(before.memory, after.memory, false),
            memory_full_us: grew(before.memory, after.memory, true),
            io_some_us: grew(before.io, after.io, false),
            io_full_us: grew(before.io, after.io, true),
        }
    }

    /// The growth of two spans together.
    pub fn add(&self, other: &Self) -> Self {
        let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        Self {
            cpu_some_us: add(self.cpu_some_us, other.cpu_some_us),
            cpu_full_us: add(self.cpu_full_us, other.cpu_full_us),
            memory_some_us: add(self.memory_some_us, other.memory_some_us),
            memory_full_us: add(self.memory_full_us, other.memory_full_us),
            io_some_us: add(self.io_some_us, other.io_some_us),
            io_full_us: add(self.io_full_us, other.io_full_us),
        }
    }

    /// Every line that exists, as `(resource, kind, µs)`.
    pub fn lines(&self) -> Vec<(&'static str, &'static str, u64)> {
        [
            ("cpu", "some", self.cpu_some_us),
            ("cpu", "full", self.cpu_full_us),
            ("memory", "some", self.memory_some_us),
            ("memory", "full", self.memory_full_us),
            ("io", "some", self.io_some_us),
            ("io", "full", self.io_full_us),
        ]
        .into_iter()
        .filter_map(|(resource, kind, us)| Some((resource, kind, us?)))
        .collect()
    }
}

/// A watched cgroup's throttling and pressure growth over the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupGrowth {
    #[serde(flatten)]
    pub group: WatchedGroup,
    /// Enforcement periods, throttled periods and throttled time (ns) over
    /// the window; `None` where the group keeps no throttling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_periods: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_throttled: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_ns: Option<u64>,
    /// Its pressure files' growth (cgroup2 only).
    pub pressure: PressureGrowth,
}

impl GroupGrowth {
    /// The growth of `group`'s counters from `before` to `after`.
    fn between(
        group: &WatchedGroup,
        before: Option<&GroupCounters>,
        after: Option<&GroupCounters>,
    ) -> Self {
        let throttling = |b: Option<&GroupCounters>| b.and_then(|c| c.throttling);
        let (tb, ta) = (throttling(before), throttling(after));
        let grew = |field: fn(&crate::system::cgroup::watch::Throttling) -> u64| {
            field(&ta?).checked_sub(field(&tb?))
        };
        let pressure = |c: Option<&GroupCounters>| {
            c.map_or(SystemPressure::default(), |c| SystemPressure {
                cpu: c.cpu,
                memory: c.memory,
                io: c.io,
            })
        };
        Self {
            group: group.clone(),
            nr_periods: grew(|t| t.nr_periods),
            nr_throttled: grew(|t| t.nr_throttled),
            throttled_ns: grew(|t| t.throttled_ns),
            pressure: PressureGrowth::between(&pressure(before), &pressure(after)),
        }
    }
}

/// What the window's sampling yields for the run document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowTelemetry {
    /// The interval asked for, and the span the samples covered, ms.
    pub every_ms: f64,
    pub span_ms: f64,
    pub samples: usize,
    /// The sampling thread's CPU time, ms.
    pub sampler_cpu_ms: f64,
    /// The cgroups of the probe and the loads and what they went through.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<GroupGrowth>,
    /// What could not be read, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

impl WindowTelemetry {
    /// The sampler's CPU as % of one CPU over the span; `None` without one.
    pub fn sampler_cpu_pct(&self) -> Option<f64> {
        (self.span_ms > 0.0).then(|| 100.0 * self.sampler_cpu_ms / self.span_ms)
    }
}

/// Every sample of a window, with the groups they read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowSamples {
    pub every_ns: u64,
    pub groups: Vec<WatchedGroup>,
    /// In time order; the first taken when the sampler started, the last
    /// when it was stopped.
    pub samples: Vec<WindowSample>,
    /// The sampling thread's CPU time, ns.
    pub cpu_ns: u64,
    /// What could not be read, each message once.
    pub errors: Vec<String>,
}

impl WindowSamples {
    /// What stays in the run document.
    pub fn summary(&self) -> WindowTelemetry {
        let (first, last) = (self.samples.first(), self.samples.last());
        let span_ns = match (first, last) {
            (Some(f), Some(l)) => l.taken_ns.saturating_sub(f.taken_ns),
            _ => 0,
        };
        fn counters(s: Option<&WindowSample>, i: usize) -> Option<&GroupCounters> {
            s?.groups.get(i)?.as_ref()
        }
        WindowTelemetry {
            every_ms: self.every_ns as f64 / 1e6,
            span_ms: span_ns as f64 / 1e6,
            samples: self.samples.len(),
            sampler_cpu_ms: self.cpu_ns as f64 / 1e6,
            cgroups: self
                .groups
                .iter()
                .enumerate()
                .map(|(i, g)| GroupGrowth::between(g, counters(first, i), counters(last, i)))
                .collect(),
            errors: self.errors.clone(),
        }
    }
}

/// Reads every counter of a [`WindowSample`] below one /proc root.
struct Reader {
    proc_root: PathBuf,
    groups: Vec<WatchedGroup>,
    /// The files of each of `groups`.
    files: Vec<GroupFiles>,
    errors: Vec<String>,
}

impl Reader {
    fn sample(&mut self, taken_ns: u64) -> WindowSample {
        let root = self.proc_root.clone();
        let cpus = self.keep(read_stat_per_cpu(&root)).unwrap_or_default();
        let pressure = SystemPressure {
            cpu: self.keep(read_pressure(&root, "cpu")).flatten(),
            memory: self.keep(read_pressure(&root, "memory")).flatten(),
            io: self.keep(read_pressure(&root, "io")).flatten(),
        };
        let reclaim = self.keep(Reclaim::read(&root)).unwrap_or_default();
        let reads: Vec<_> = self.files.iter().map(GroupFiles::read).collect();
        let groups = reads.into_iter().map(|read| self.keep(read)).collect();
        WindowSample {
            taken_ns,
            cpus,
            pressure,
            reclaim,
            groups,
        }
    }

    /// The value read, or `None` with its error noted once.
    fn keep<T>(&mut self, read: Result<T, ProcError>) -> Option<T> {
        read.map_err(|e| {
            let message = e.to_string();
            if !self.errors.contains(&message) {
                self.errors.push(message);
            }
        })
        .ok()
    }
}

/// A thread sampling the window until [`finish`](Self::finish)ed (or
/// dropped).
pub struct WindowSampler {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<WindowSamples>>,
}

impl WindowSampler {
    /// Starts sampling below `proc_root` every `every` (the first sample at
    /// once), reading `groups` too, stamping samples with `clock`
    /// (`CLOCK_MONOTONIC` ns).
    pub fn start(
        proc_root: &Path,
        groups: Vec<WatchedGroup>,
        every: Duration,
        clock: fn() -> u64,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = channel::<()>();
        let mut reader = Reader {
            proc_root: proc_root.to_path_buf(),
            files: groups.iter().map(|g| GroupFiles::at(&g.path)).collect(),
            groups,
            errors: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("fb-window-sampler".into())
            .spawn(move || {
                let cpu_at_start = thread_cpu_ns();
                let mut samples = Vec::new();
                sample_until(&mut reader, every, clock, &stopped, |s| samples.push(s));
                WindowSamples {
                    every_ns: every.as_nanos() as u64,
                    samples,
                    cpu_ns: thread_cpu_ns().saturating_sub(cpu_at_start),
                    groups: reader.groups,
                    errors: reader.errors,
                }
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops sampling (with one last sample) and hands back the samples.
    pub fn finish(mut self) -> WindowSamples {
        self.stop_thread().unwrap_or_default()
    }

    fn stop_thread(&mut self) -> Option<WindowSamples> {
        drop(self.stop.take());
        self.thread.take()?.join().ok()
    }
}

impl Drop for WindowSampler {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Hands `keep` a sample at once, then one every `every` until `stopped`
/// says stop (or is dropped), then a last one.
fn sample_until(
    reader: &mut Reader,
    every: Duration,
    clock: fn() -> u64,
    stopped: &Receiver<()>,
    mut keep: impl FnMut(WindowSample),
) {
    let start_ns = clock();
    keep(reader.sample(start_ns));
    for k in 1u32.. {
        let due_ns = start_ns + (every * k).as_nanos() as u64;
        let wait = Duration::from_nanos(due_ns.saturating_sub(clock()));
        match stopped.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => keep(reader.sample(clock())),
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    keep(reader.sample(clock()));
}

/// A thread sampling the machine (no cgroups) for as long as `watch` runs,
/// keeping the last samples only, of which [`RollingSampler::recent`]
/// copies those around a span; it stops when dropped.
pub struct RollingSampler {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    kept: Arc<Mutex<VecDeque<WindowSample>>>,
}

impl RollingSampler {
    /// Starts sampling below `proc_root` every `every`, keeping the last
    /// `keep` samples, stamped with `clock` (`CLOCK_MONOTONIC` ns).
    pub fn start(
        proc_root: &Path,
        every: Duration,
        keep: usize,
        clock: fn() -> u64,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = channel::<()>();
        let mut reader = Reader {
            proc_root: proc_root.to_path_buf(),
            groups: Vec::new(),
            files: Vec::new(),
            errors: Vec::new(),
        };
        let kept = Arc::new(Mutex::new(VecDeque::with_capacity(keep + 1)));
        let ring = kept.clone();
        let thread = std::thread::Builder::new()
            .name("fb-watch-sampler".into())
            .spawn(move || {
                sample_until(&mut reader, every, clock, &stopped, |sample| {
                    let mut ring = ring.lock().unwrap_or_else(|e| e.into_inner());
                    if ring.len() >= keep {
                        ring.pop_front();
                    }
                    ring.push_back(sample);
                });
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
            kept,
        })
    }

    /// Copies of the kept samples from the last one at or before `from_ns`
    /// to the first one at or after `to_ns`, in time order.
    pub fn recent(&self, from_ns: u64, to_ns: u64) -> Vec<WindowSample> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_empty() {
            return Vec::new();
        }
        let first = kept
            .iter()
            .rposition(|s| s.taken_ns <= from_ns)
            .unwrap_or(0);
        let last = kept
            .iter()
            .position(|s| s.taken_ns >= to_ns)
            .unwrap_or(kept.len() - 1)
            .max(first);
        kept.range(first..=last).cloned().collect()
    }
}

impl Drop for RollingSampler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The calling thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0, |t| {
        t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::cgroup::watch::Throttling;
    use crate::system::telemetry::tests::pressure;

    #[test]
    fn reclaim_sums_the_kinds_and_is_none_where_the_kernel_lacks_every_key() {
        let text = "nr_free_pages 5\nallocstall_normal 2\nallocstall_movable 3\npswpin 7\n\
                    workingset_refault_anon 4\nworkingset_refault_file 6\npgfault x\n";
        let r = Reclaim::parse(text).unwrap();
        assert_eq!(
            (r.alloc_stalls, r.compact_stalls, r.swap_ins, r.refaults),
            (Some(5), None, Some(7), Some(10))
        );
        let machine = Reclaim::parse(include_str!("../testdata/vmstat")).unwrap();
        assert_eq!(
            (machine.swap_ins, machine.alloc_stalls.is_some()),
            (Some(3_808_781), true)
        );
        assert_eq!(
            Reclaim::parse(include_str!("../testdata/vmstat_old"))
                .unwrap()
                .alloc_stalls,
            None
        );
        assert_eq!(Reclaim::parse("").unwrap(), Reclaim::default());
        assert_eq!(Reclaim::parse("pswpin lots\n"), Err("pswpin lots"));
        let dir = tempfile::tempdir().unwrap();
        let err = Reclaim::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("vmstat"), "{err}");
    }

    #[test]
    fn pressure_growth_is_none_where_a_line_is_missing_or_went_backwards() {
        let before = SystemPressure {
            cpu: pressure(100, None),
            memory: pressure(10, Some(5)),
            io: pressure(50, Some(50)),
        };
        let after = SystemPressure {
            cpu: pressure(300, None),
            memory: pressure(40, Some(25)),
            io: pressure(40, Some(60)),
        };
        let g = PressureGrowth::between(&before, &after);
        assert_eq!((g.cpu_some_us, g.cpu_full_us), (Some(200), None));
        assert_eq!((g.memory_some_us, g.memory_full_us), (Some(30), Some(20)));
        assert_eq!((g.io_some_us, g.io_full_us), (None, Some(10)));
        assert_eq!(g.add(&g).memory_full_us, Some(40));
        assert_eq!(g.add(&PressureGrowth::default()).cpu_some_us, None);
        assert_eq!(g.lines().len(), 4);
        let none = PressureGrowth::between(&SystemPressure::default(), &after);
        assert_eq!(none, PressureGrowth::default());
    }

    #[test]
    fn the_summary_gives_each_groups_growth_over_the_window_and_the_cost() {
        let group = |path: &str| WatchedGroup {
            hierarchy: "cgroup v1 cpu".into(),
            path: path.into(),
            roles: vec!["loads".into()],
        };
        let counters = |periods, throttled, ns| GroupCounters {
            throttling: Some(Throttling {
                nr_periods: periods,
                nr_throttled: throttled,
                throttled_ns: ns,
            }),
            ..GroupCounters::default()
        };
        let sample = |at_ms: u64, c: Option<GroupCounters>| WindowSample {
            taken_ns: at_ms * 1_000_000,
            groups: vec![c, Some(GroupCounters::default())],
            ..WindowSample::default()
        };
        let samples = WindowSamples {
            every_ns: 100_000_000,
            groups: vec![group("/cg/cpu/fb"), group("/cg/unified")],
            samples: vec![
                sample(1000, Some(counters(10, 1, 1_000))),
                sample(1100, None),
                sample(3000, Some(counters(30, 5, 9_000))),
            ],
            cpu_ns: 4_000_000,
            errors: vec![],
        };
        let s = samples.summary();
        assert_eq!((s.every_ms, s.span_ms, s.samples), (100.0, 2000.0, 3));
        assert_eq!(s.sampler_cpu_pct(), Some(0.2));
        let fb = &s.cgroups[0];
        assert_eq!(
            (fb.nr_periods, fb.nr_throttled, fb.throttled_ns),
            (Some(20), Some(4), Some(8_000))
        );
        let root = &s.cgroups[1];
        assert_eq!(
            (root.nr_periods, root.pressure),
            (None, PressureGrowth::default())
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains(r#""path":"/cg/cpu/fb""#) && !json.contains("cpu_some_us"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<WindowTelemetry>(&json).unwrap(), s);
    }

    /// The real thread on this machine's /proc: samples in time order, at
    /// least the first and the last, every CPU's split, and its CPU timed.
    #[test]
    fn the_sampler_samples_this_machine_until_finished() {
        let sampler = WindowSampler::start(
            Path::new("/proc"),
            Vec::new(),
            Duration::from_millis(20),
            || {
                use nix::time::{clock_gettime, ClockId};
                let t = clock_gettime(ClockId::CLOCK_MONOTONIC).unwrap();
                t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
            },
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let samples = sampler.finish();
        assert!(samples.samples.len() >= 2, "{}", samples.samples.len());
        assert!(samples
            .samples
            .windows(2)
            .all(|w| w[0].taken_ns <= w[1].taken_ns));
        let cpus = std::thread::available_parallelism().unwrap().get();
        assert!(
            samples.samples.iter().all(|s| s.cpus.len() >= cpus),
            "{samples:?}"
        );
        assert!(samples.cpu_ns > 0);
        assert!(samples.errors.is_empty(), "{:?}", samples.errors);
    }
}
