//! The scheduler flight recorder of `--explain`: every `sched_switch` and
//! `sched_wakeup` on the probe's CPUs, stamped with `CLOCK_MONOTONIC` (the
//! probe's clock), kept for the join with the probe's late events.
//!
//! Built on `perf_event_open` (per-CPU tracepoint events into one mmap ring
//! per CPU, drained by a thread every [`DRAIN_EVERY`]) rather than a BPF
//! program: it needs no compiler, no BPF loader crate and no BTF, works
//! with `perf_event_paranoid` 2 as root, and its cost is the kernel's own
//! tracepoint output plus our reading, both measured (a BPF program that
//! kept only the probe CPUs' switches in a map would save the reading but
//! pay the same per-switch entry, and its cost is harder to see). The
//! kernel's share is timed by [`event_cost`], the reading's by the
//! drain thread's CPU clock; the recorder stops itself, with a notice,
//! once the two together pass its budget share of a CPU.
//!
//! A recorder runs either for a scenario, keeping every record until it is
//! stopped ([`Recorder::start`]), or for as long as `watch` runs, keeping
//! only the last stretch of time ([`Recorder::start_rolling`]), of which
//! [`Recorder::recent`] copies a span.

mod perf;
mod record;
mod tracefs;

pub use record::{Switch, Wakeup};

use perf::{CpuRing, RECORD_LOST, RECORD_SAMPLE};
use record::{Layout, Sample};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the rings are drained: rarely, since each wake-up of the
/// reader competes with the probe on a small machine.
pub const DRAIN_EVERY: Duration = Duration::from_millis(200);
/// Pages of one CPU's ring (4 MiB: about 50,000 records of ~80 bytes, 4 s
/// of the most the budget lets the recorder keep up with, 20 drains'
/// worth; a burst past it is counted as lost).
const RING_PAGES: usize = 1024;
/// Records kept at most; past them the recorder stops, saying so.
const MAX_RECORDS: usize = 4_000_000;
/// How long a scenario's recorder runs before its cost is judged.
pub const COST_GRACE: Duration = Duration::from_millis(250);

/// Why the recorder cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error("{0}")]
    Tracefs(#[from] tracefs::TracefsError),
    #[error("cannot open the sched tracepoints on CPU {cpu} (perf_event_open): {error}")]
    Open { cpu: u32, error: std::io::Error },
    #[error("cannot start the recorder's thread: {0}")]
    Thread(std::io::Error),
}

/// What the recorder saw.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Switches, in time order on each CPU.
    pub switches: Vec<Switch>,
    pub wakeups: Vec<Wakeup>,
    /// The command name of each task seen switching.
    pub comms: HashMap<i32, String>,
    /// Records the kernel could not write (a full ring).
    pub lost: u64,
    /// Records read and then dropped as older than a rolling recorder keeps.
    pub pruned: u64,
    /// The recorder's reading thread's CPU time, ns.
    pub drain_cpu_ns: u64,
    /// When it started and when it stopped recording (`CLOCK_MONOTONIC`).
    pub from_ns: u64,
    pub to_ns: u64,
    /// Why it stopped before it was asked to, if it did.
    pub stopped: Option<String>,
}

impl Trace {
    /// Records read.
    pub fn records(&self) -> u64 {
        (self.switches.len() + self.wakeups.len()) as u64
    }

    /// A copy of the records of this trace as [`Recorder::recent`] hands it
    /// over (switches sorted by CPU and time, wake-ups by time) that
    /// [`Recorder::recent`] would copy for `from_ns` to `to_ns`: found by
    /// bisection, so a span of a long trace costs only what it holds.
    pub fn span(&self, from_ns: u64, to_ns: u64) -> Trace {
        let (lo, hi) = kept_for(from_ns, to_ns);
        let mut switches = Vec::new();
        let mut rest = &self.switches[..];
        while let Some(first) = rest.first() {
            let cpu = rest.partition_point(|s| s.cpu == first.cpu);
            let on = &rest[..cpu];
            let start = on.partition_point(|s| s.at_ns < lo);
            let end = on.partition_point(|s| s.at_ns <= hi);
            switches.extend_from_slice(&on[start..end]);
            rest = &rest[cpu..];
        }
        let start = self.wakeups.partition_point(|w| w.at_ns < lo);
        let end = self.wakeups.partition_point(|w| w.at_ns <= hi);
        let comms = names_of(&switches, |tid| self.comms.get(&tid).cloned());
        Trace {
            switches,
            wakeups: self.wakeups[start..end].to_vec(),
            comms,
            from_ns: self.from_ns.max(lo),
            to_ns,
            stopped: self.stopped.clone(),
            ..*self
        }
    }
}

/// The times of the records a span from `from_ns` to `to_ns` holds: from
/// [`KEPT_BEFORE_NS`] before it, so that each CPU's last switch before the
/// span is in it.
fn kept_for(from_ns: u64, to_ns: u64) -> (u64, u64) {
    (from_ns.saturating_sub(KEPT_BEFORE_NS), to_ns)
}

/// The command names of the tasks `switches` name, as `name_of` knows them.
fn names_of(switches: &[Switch], name_of: impl Fn(i32) -> Option<String>) -> HashMap<i32, String> {
    switches
        .iter()
        .flat_map(|s| [s.prev_tid, s.next_tid])
        .filter_map(|tid| Some((tid, name_of(tid)?)))
        .collect()
}

/// A running recorder; dropped unstopped (a failed scenario), it stops
/// and lets its thread end.
pub struct Recorder {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Trace>>,
    /// What it recorded so far, shared with its reading thread.
    live: Arc<Mutex<Trace>>,
}

/// What a running recorder has done so far, without its records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecorderCounts {
    /// Records read (kept or pruned) and records the kernel could not write.
    pub records: u64,
    pub lost: u64,
    /// Its time so far, ns: the kernel's per record and the reading.
    pub cost_ns: f64,
    /// How long it has recorded, ns.
    pub elapsed_ns: u64,
    /// Why it stopped, if it did.
    pub stopped: Option<String>,
}

/// What the recorder may cost before it stops itself.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// The kernel's time per record written, ns ([`event_cost`]).
    pub kernel_ns_per_record: f64,
    /// The share of one CPU allowed, 0–1.
    pub cpu_share: f64,
    /// How long it runs before its cost is judged (its first drains read
    /// what the rings held at the start).
    pub grace: Duration,
}

impl Recorder {
    /// Starts recording on `cpus`, within `budget`, keeping every record.
    pub fn start(cpus: &[u32], budget: Budget) -> Result<Self, RecorderError> {
        Self::spawn(cpus, budget, None)
    }

    /// Starts recording on `cpus`, within `budget`, keeping the records of
    /// the last `keep` only.
    pub fn start_rolling(
        cpus: &[u32],
        budget: Budget,
        keep: Duration,
    ) -> Result<Self, RecorderError> {
        Self::spawn(cpus, budget, Some(keep.as_nanos() as u64))
    }

    fn spawn(cpus: &[u32], budget: Budget, keep_ns: Option<u64>) -> Result<Self, RecorderError> {
        let (rings, layout) = open_rings(cpus)?;
        let stop = Arc::new(AtomicBool::new(false));
        let live = Arc::new(Mutex::new(Trace::default()));
        let (flag, shared) = (stop.clone(), live.clone());
        let thread = std::thread::Builder::new()
            .name("fb-sched-trace".into())
            .spawn(move || record(rings, layout, budget, &flag, &shared, keep_ns))
            .map_err(RecorderError::Thread)?;
        Ok(Self {
            stop,
            thread: Some(thread),
            live,
        })
    }

    fn live(&self) -> MutexGuard<'_, Trace> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the records from `from_ns` to `to_ns` (`CLOCK_MONOTONIC`),
    /// with, on each CPU, the last switch before `from_ns` (what was
    /// running then), switches sorted by CPU and time as [`Recorder::stop`]
    /// sorts them, wake-ups by time. Only the copying holds the reading
    /// thread back; the sorting is done after.
    pub fn recent(&self, from_ns: u64, to_ns: u64) -> Trace {
        let (lo, hi) = kept_for(from_ns, to_ns);
        let span = |at_ns: u64| (lo..=hi).contains(&at_ns);
        let live = self.live();
        let mut switches: Vec<Switch> = live
            .switches
            .iter()
            .filter(|s| span(s.at_ns))
            .copied()
            .collect();
        let mut wakeups: Vec<Wakeup> = live
            .wakeups
            .iter()
            .filter(|w| span(w.at_ns))
            .copied()
            .collect();
        let comms = names_of(&switches, |tid| live.comms.get(&tid).cloned());
        let trace = Trace {
            lost: live.lost,
            pruned: live.pruned,
            drain_cpu_ns: live.drain_cpu_ns,
            from_ns: live.from_ns.max(lo),
            to_ns,
            stopped: live.stopped.clone(),
            ..Trace::default()
        };
        drop(live);
        sort_by_cpu_and_time(&mut switches);
        wakeups.sort_by_key(|w| w.at_ns);
        Trace {
            switches,
            wakeups,
            comms,
            ..trace
        }
    }

    /// What it has done so far, its cost at `kernel_ns_per_record`.
    pub fn counts(&self, kernel_ns_per_record: f64) -> RecorderCounts {
        let live = self.live();
        RecorderCounts {
            records: live.records() + live.pruned,
            lost: live.lost,
            cost_ns: cost_ns(&live, kernel_ns_per_record),
            elapsed_ns: monotonic_ns().saturating_sub(live.from_ns),
            stopped: live.stopped.clone(),
        }
    }

    /// Stops recording and hands over what was recorded.
    pub fn stop(mut self) -> Trace {
        let thread = self.thread.take().expect("stopped once");
        self.stop.store(true, Ordering::Release);
        thread.thread().unpark();
        thread.join().expect("the recorder does not panic")
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(thread) = &self.thread {
            self.stop.store(true, Ordering::Release);
            thread.thread().unpark();
        }
    }
}

fn open_rings(cpus: &[u32]) -> Result<(Vec<CpuRing>, Layout), RecorderError> {
    let tracefs = tracefs::Tracefs::open()?;
    let switch = tracefs.event("sched/sched_switch")?;
    let wakeup = tracefs.event("sched/sched_wakeup")?;
    let layout = Layout::of(&switch, &wakeup)?;
    let rings = cpus
        .iter()
        .map(|&cpu| {
            CpuRing::open(cpu, &[switch.id, wakeup.id], RING_PAGES)
                .map_err(|error| RecorderError::Open { cpu, error })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((rings, layout))
}

/// How far before a span [`Recorder::recent`] copies records, so that
/// each CPU's last switch before the span is in the copy.
const KEPT_BEFORE_NS: u64 = 1_000_000_000;
/// Command names a rolling recorder keeps at most before it forgets those
/// of the tasks its kept records no longer name.
const MAX_COMMS: usize = 4_096;

/// The reading thread: drains the rings into `live` until told to stop, or
/// until its cost or the records pass their bounds; with `keep_ns`, drops
/// the records older than that after each drain.
fn record(
    mut rings: Vec<CpuRing>,
    layout: Layout,
    budget: Budget,
    stop: &AtomicBool,
    live: &Mutex<Trace>,
    keep_ns: Option<u64>,
) -> Trace {
    let lock = || live.lock().unwrap_or_else(|e| e.into_inner());
    lock().from_ns = monotonic_ns();
    let started_cpu_ns = thread_cpu_ns();
    let mut scratch = Vec::with_capacity(256);
    let mut on = rings.iter().all(|ring| ring.enable(true).is_ok());
    if !on {
        lock().stopped = Some("the sched tracepoints could not be enabled".into());
    }
    loop {
        let last = stop.load(Ordering::Acquire);
        let mut trace = lock();
        for ring in &mut rings {
            ring.drain(&mut scratch, |kind, bytes| {
                keep(&layout, kind, bytes, &mut trace)
            });
        }
        let now = monotonic_ns();
        if let Some(keep_ns) = keep_ns {
            prune(&mut trace, now.saturating_sub(keep_ns));
        }
        trace.drain_cpu_ns = thread_cpu_ns().saturating_sub(started_cpu_ns);
        if on {
            let why = over_budget(&trace, budget, now);
            if why.is_some() {
                on = false;
                rings.iter().for_each(|ring| drop(ring.enable(false)));
                trace.stopped = why;
            }
        }
        drop(trace);
        if last {
            break;
        }
        std::thread::park_timeout(DRAIN_EVERY);
    }
    let mut trace = std::mem::take(&mut *lock());
    trace.to_ns = monotonic_ns();
    sort_by_cpu_and_time(&mut trace.switches);
    trace
}

/// Drops the records of `trace` from before `before_ns`, counting them,
/// and, past [`MAX_COMMS`], the names of tasks no kept switch names.
fn prune(trace: &mut Trace, before_ns: u64) {
    let kept = trace.records();
    trace.switches.retain(|s| s.at_ns >= before_ns);
    trace.wakeups.retain(|w| w.at_ns >= before_ns);
    trace.pruned += kept - trace.records();
    if trace.comms.len() > MAX_COMMS {
        let named: std::collections::HashSet<i32> = trace
            .switches
            .iter()
            .flat_map(|s| [s.prev_tid, s.next_tid])
            .collect();
        trace.comms.retain(|tid, _| named.contains(tid));
    }
}

/// Why the recorder must stop now, if it must.
fn over_budget(trace: &Trace, budget: Budget, now_ns: u64) -> Option<String> {
    if trace.switches.len() + trace.wakeups.len() >= MAX_RECORDS {
        return Some(format!("it kept {MAX_RECORDS} records, its most"));
    }
    let elapsed = now_ns.saturating_sub(trace.from_ns);
    if elapsed < budget.grace.as_nanos() as u64 {
        return None;
    }
    let share = cost_ns(trace, budget.kernel_ns_per_record) / elapsed as f64;
    (share > budget.cpu_share).then(|| {
        format!(
            "it cost {} % of a CPU, above {} %",
            percent(share),
            percent(budget.cpu_share)
        )
    })
}

/// `share` (0–1) in percent, to 0.1 or, below it, to its first figures.
fn percent(share: f64) -> String {
    let pct = share * 100.0;
    match pct >= 0.1 {
        true => format!("{pct:.1}"),
        false => format!("{pct:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string(),
    }
}

/// The recorder's time so far: the kernel's per record and the reading.
pub fn cost_ns(trace: &Trace, kernel_ns_per_record: f64) -> f64 {
    (trace.records() + trace.pruned + trace.lost) as f64 * kernel_ns_per_record
        + trace.drain_cpu_ns as f64
}

fn keep(layout: &Layout, kind: u32, bytes: &[u8], trace: &mut Trace) {
    match kind {
        RECORD_LOST => {
            trace.lost += bytes
                .get(8..16)
                .map_or(0, |b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
        }
        RECORD_SAMPLE => match layout.read(bytes) {
            Some(Sample::Switch {
                switch,
                prev_comm,
                next_comm,
            }) => {
                name(&mut trace.comms, switch.prev_tid, prev_comm);
                name(&mut trace.comms, switch.next_tid, next_comm);
                trace.switches.push(switch);
            }
            Some(Sample::Wakeup(wakeup)) => trace.wakeups.push(wakeup),
            None => {}
        },
        _ => {}
    }
}

/// Remembers `tid`'s command name, allocating only when it is new.
fn name(comms: &mut HashMap<i32, String>, tid: i32, comm: &[u8]) {
    let known = comms.get(&tid).is_some_and(|c| c.as_bytes() == comm);
    if !known {
        comms.insert(tid, String::from_utf8_lossy(comm).into_owned());
    }
}

fn sort_by_cpu_and_time(switches: &mut [Switch]) {
    switches.sort_by_key(|s| (s.cpu, s.at_ns));
}

fn clock_ns(clock: nix::time::ClockId) -> u64 {
    nix::time::clock_gettime(clock)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

fn monotonic_ns() -> u64 {
    clock_ns(nix::time::ClockId::CLOCK_MONOTONIC)
}

fn thread_cpu_ns() -> u64 {
    clock_ns(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
}

/// Round trips of the timing in [`event_cost`].
const TRIPS: u32 = 2_000;

/// The kernel's time per record written, ns: two threads on `cpu` pass a
/// byte back and forth (two switches and two wake-ups a trip), timed with
/// and without the tracepoints on, the better of three tries each; the
/// difference over the records written. Also says the reading's time per
/// record, ns.
pub fn event_cost(cpu: u32) -> Result<(f64, f64), RecorderError> {
    let (mut rings, layout) = open_rings(&[cpu])?;
    let mut best = [f64::INFINITY; 2];
    let (mut records, mut read_ns) = (0u64, 0u64);
    let mut scratch = Vec::new();
    for _ in 0..3 {
        for (index, on) in [false, true].into_iter().enumerate() {
            let _ = rings[0].enable(on);
            let took = ping_pong(cpu).map_err(RecorderError::Thread)?;
            let _ = rings[0].enable(false);
            best[index] = best[index].min(took as f64);
            let start = thread_cpu_ns();
            let mut trace = Trace::default();
            rings[0].drain(&mut scratch, |kind, bytes| {
                keep(&layout, kind, bytes, &mut trace)
            });
            read_ns += thread_cpu_ns() - start;
            records += trace.records();
        }
    }
    let records_per_try = (records as f64 / 3.0).max(1.0);
    Ok((
        ((best[1] - best[0]) / records_per_try).max(0.0),
        read_ns as f64 / records.max(1) as f64,
    ))
}

/// Wall time of [`TRIPS`] round trips of a byte between two threads on
/// `cpu`, ns.
fn ping_pong(cpu: u32) -> std::io::Result<u64> {
    use std::io::{Read as _, Write as _};
    let (mut there_rx, mut there_tx) = std::io::pipe()?;
    let (mut back_rx, mut back_tx) = std::io::pipe()?;
    let pin = move || {
        let mut set = nix::sched::CpuSet::new();
        let _ = set.set(cpu as usize);
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
    };
    let echo = std::thread::Builder::new()
        .name("fb-trace-cost".into())
        .spawn(move || {
            pin();
            let mut byte = [0u8];
            while there_rx.read_exact(&mut byte).is_ok() {
                if back_tx.write_all(&byte).is_err() {
                    break;
                }
            }
        })?;
    let timing = std::thread::Builder::new()
        .name("fb-trace-cost".into())
        .spawn(move || -> std::io::Result<u64> {
            pin();
            let mut byte = [0u8];
            let start = monotonic_ns();
            for _ in 0..TRIPS {
                there_tx.write_all(&byte)?;
                back_rx.read_exact(&mut byte)?;
            }
            Ok(monotonic_ns() - start)
        })?;
    let took = timing.join().expect("the timing thread does not panic");
    let _ = echo.join();
    took
}

/// Context switches per second on the whole machine over `sample`, from
/// /proc/stat's `ctxt` below `proc_root`.
pub fn switch_rate(proc_root: &std::path::Path, sample: Duration) -> Option<f64> {
    let read = || -> Option<u64> {
        let text = std::fs::read_to_string(proc_root.join("stat")).ok()?;
        text.lines()
            .find_map(|line| line.strip_prefix("ctxt "))?
            .trim()
            .parse()
            .ok()
    };
    let (before, start) = (read()?, monotonic_ns());
    std::thread::sleep(sample);
    let (after, end) = (read()?, monotonic_ns());
    Some(after.checked_sub(before)? as f64 * 1e9 / end.saturating_sub(start).max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_rate_comes_from_ctxt() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stat"), "cpu 1 2 3\nctxt 1000\n").unwrap();
        // The file does not change: no switches.
        assert_eq!(switch_rate(dir.path(), Duration::from_millis(1)), Some(0.0));
        std::fs::write(dir.path().join("stat"), "cpu 1 2 3\n").unwrap();
        assert_eq!(switch_rate(dir.path(), Duration::from_millis(1)), None);
    }

    #[test]
    fn the_recorder_stops_above_its_share_of_a_cpu_once_past_its_grace() {
        let budget = Budget {
            kernel_ns_per_record: 1_000.0,
            cpu_share: 0.01,
            grace: COST_GRACE,
        };
        let switch = Switch {
            at_ns: 0,
            cpu: 0,
            prev_tid: 1,
            prev_runnable: true,
            next_tid: 2,
        };
        // 5,000 records of 1 µs and 1 ms of reading: 6 ms.
        let trace = Trace {
            switches: vec![switch; 5_000],
            drain_cpu_ns: 1_000_000,
            from_ns: 0,
            ..Trace::default()
        };
        assert_eq!(cost_ns(&trace, budget.kernel_ns_per_record), 6_000_000.0);
        // 6 ms in 100 ms is 6 %, but the grace is not over.
        assert_eq!(over_budget(&trace, budget, 100_000_000), None);
        let why = over_budget(&trace, budget, 300_000_000).expect("2 % is above 1 %");
        assert!(why.contains("2.0 % of a CPU, above 1.0 %"), "{why}");
        let small = Budget {
            cpu_share: 0.000_001,
            ..budget
        };
        let why = over_budget(&trace, small, 1_000_000_000).unwrap();
        assert!(why.ends_with("0.6 % of a CPU, above 0.0001 %"), "{why}");
        assert_eq!(percent(0.000_5), "0.05");
        assert_eq!(over_budget(&trace, budget, 1_000_000_000), None);
    }

    #[test]
    fn a_span_holds_what_recent_would_copy_with_a_second_before_it() {
        const S: u64 = 1_000_000_000;
        let switch = |cpu, at_ns| Switch {
            at_ns,
            cpu,
            prev_tid: 1,
            prev_runnable: false,
            next_tid: 2 + cpu as i32,
        };
        let mut switches: Vec<Switch> = (0..40).map(|i| switch(i % 2, i as u64 * S / 4)).collect();
        sort_by_cpu_and_time(&mut switches);
        let trace = Trace {
            switches,
            wakeups: (0..40)
                .map(|i| Wakeup {
                    at_ns: i * S / 4,
                    target_cpu: 0,
                    tid: 2,
                })
                .collect(),
            comms: HashMap::from([(1, "a".into()), (2, "b".into()), (3, "c".into())]),
            lost: 7,
            from_ns: 0,
            to_ns: 10 * S,
            ..Trace::default()
        };
        for (from_ns, to_ns) in [
            (0, S),
            (3 * S, 4 * S),
            (5 * S / 2, 5 * S / 2),
            (9 * S, 20 * S),
        ] {
            let span = trace.span(from_ns, to_ns);
            let within = |at_ns: u64| at_ns + S >= from_ns && at_ns <= to_ns;
            let expected: Vec<Switch> = trace
                .switches
                .iter()
                .filter(|s| within(s.at_ns))
                .copied()
                .collect();
            assert_eq!(span.switches, expected, "{from_ns}-{to_ns}");
            assert!(span.wakeups.iter().all(|w| within(w.at_ns)));
            assert_eq!(
                span.wakeups.len(),
                trace.wakeups.iter().filter(|w| within(w.at_ns)).count()
            );
            assert_eq!(span.from_ns, from_ns.saturating_sub(S));
            assert_eq!((span.to_ns, span.lost), (to_ns, 7));
        }
        let one = trace.span(S, S);
        assert_eq!(one.comms.len(), 3, "both CPUs' tasks are named");
        assert!(trace.span(30 * S, 31 * S).switches.is_empty());
    }

    /// A budget nothing passes, when the tests run as root; else says the
    /// running test is skipped.
    fn unbounded_when_root() -> Option<Budget> {
        if !nix::unistd::geteuid().is_root() {
            crate::system::skip("perf_event_open on every task of a CPU needs root");
            return None;
        }
        Some(Budget {
            kernel_ns_per_record: 0.0,
            cpu_share: 1.0,
            grace: COST_GRACE,
        })
    }

    #[test]
    fn records_the_switches_of_a_busy_cpu_when_root() {
        let Some(budget) = unbounded_when_root() else {
            return;
        };
        let recorder = Recorder::start(&[0], budget).expect("recorder");
        ping_pong(0).unwrap();
        let trace = recorder.stop();
        assert!(
            trace.switches.len() as u32 >= TRIPS,
            "{}",
            trace.switches.len()
        );
        assert!(trace.switches.iter().all(|s| s.cpu == 0));
        assert!(trace.switches.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        assert!(trace.comms.values().any(|c| c == "fb-trace-cost"));
        assert!(
            trace.switches[0].at_ns >= trace.from_ns.saturating_sub(DRAIN_EVERY.as_nanos() as u64)
        );
    }

    #[test]
    fn pruning_counts_what_it_drops_and_keeps_the_rest() {
        let switch = |at_ns| Switch {
            at_ns,
            cpu: 0,
            prev_tid: 1,
            prev_runnable: false,
            next_tid: 2,
        };
        let mut trace = Trace {
            switches: (0..10).map(switch).collect(),
            ..Trace::default()
        };
        prune(&mut trace, 4);
        assert_eq!((trace.switches.len(), trace.pruned), (6, 4));
        assert_eq!(trace.switches[0].at_ns, 4);
        assert_eq!(
            cost_ns(&trace, 1.0),
            10.0,
            "pruned records still cost what the kernel took to write them"
        );
    }

    #[test]
    fn a_rolling_recorder_hands_over_a_recent_span_when_root() {
        let Some(budget) = unbounded_when_root() else {
            return;
        };
        let recorder =
            Recorder::start_rolling(&[0], budget, Duration::from_secs(5)).expect("recorder");
        let from_ns = monotonic_ns();
        ping_pong(0).unwrap();
        std::thread::sleep(DRAIN_EVERY * 2);
        let recent = recorder.recent(from_ns, monotonic_ns());
        assert!(
            recent.switches.len() as u32 >= TRIPS,
            "{}",
            recent.switches.len()
        );
        assert!(recent.comms.values().any(|c| c == "fb-trace-cost"));
        assert!(recent
            .switches
            .windows(2)
            .all(|w| (w[0].cpu, w[0].at_ns) <= (w[1].cpu, w[1].at_ns)));
        assert!(recent.wakeups.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        let counts = recorder.counts(0.0);
        assert!(counts.records >= recent.records(), "{counts:?}");
        assert_eq!(counts.stopped, None);
        assert!(recorder.stop().records() >= recent.records());
    }
}
