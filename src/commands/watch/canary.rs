//! The canaries: small periodic tasks that stand in for interactive
//! programs, each a thread of `watch` at the user's ordinary scheduling.
//! A canary wakes at each period's absolute start (as cyclictest does),
//! does its frame's CPU work (`measure::work`, none for the timer), and
//! splits each event's delay as a run's probe does (`measure::attrib`),
//! handing every split to the watch without blocking (a full queue drops
//! the event and counts it). An rt-app workload's tasks are canaries too,
//! run by the `rtapp` probe's executor (`super::rtapp`); [`Canaries`] starts
//! and stops every kind.

use super::rtapp::RtappCanaries;
use crate::measure::affinity;
use crate::measure::attrib::EventSplitter;
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::cpu_time::ThreadCpuTime;
use crate::measure::late::{EventSplit, EventTimes, LateAccount};
use crate::measure::work::work_cpu_ns;
use crate::sim::periodic::{CpuDemand, PeriodicShape};
use crate::sim::rtapp::model::Workload;
use crate::sim::shapes;
use crate::system::cpulist::CpuList;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A canary one can name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CanaryDef {
    pub name: &'static str,
    /// One line for `--help`.
    pub summary: &'static str,
    pub shape: PeriodicShape,
    /// An event later than this is an incident, unless `--threshold` says.
    pub threshold_ns: u64,
}

const MS: u64 = 1_000_000;

/// The canaries, the default ones first.
pub const CANARIES: [CanaryDef; 5] = [
    CanaryDef {
        name: "timer",
        summary: "a 1 ms timer and no work, as cyclictest",
        shape: PeriodicShape {
            period_ns: MS,
            cpu: CpuDemand::Share(0.0),
        },
        threshold_ns: 2 * MS,
    },
    CanaryDef {
        name: "frame",
        summary: "60 frames a second, each 3 % of its period's CPU (0.5 ms)",
        shape: PeriodicShape {
            period_ns: 16_666_667,
            cpu: CpuDemand::Share(3.0),
        },
        threshold_ns: 8 * MS,
    },
    CanaryDef {
        name: "x",
        summary: "the x probe: 10 ms pointer events, redraw work sweeping 0-100 %",
        shape: shapes::X,
        threshold_ns: 10 * MS,
    },
    CanaryDef {
        name: "audio",
        summary: "the audio probe: every 50 ms, 5 % of a CPU",
        shape: shapes::AUDIO,
        threshold_ns: 10 * MS,
    },
    CanaryDef {
        name: "video",
        summary: "the video probe: 60 frames a second, 40 % of each period",
        shape: shapes::VIDEO,
        threshold_ns: 8 * MS,
    },
];

/// The canaries `watch` runs when none is named.
pub const DEFAULT: [&str; 2] = ["timer", "frame"];

/// The canary named `name`.
pub fn find(name: &str) -> Option<&'static CanaryDef> {
    CANARIES.iter().find(|c| c.name == name)
}

/// One canary as the user set it.
#[derive(Debug, Clone, PartialEq)]
pub struct CanarySetting {
    /// As it is named in lines, metrics and the store.
    pub name: String,
    /// Its period (an rt-app task's shortest timer period).
    pub period_ns: u64,
    pub threshold_ns: u64,
    pub work: CanaryWork,
}

/// What a canary runs.
#[derive(Debug, Clone, PartialEq)]
pub enum CanaryWork {
    /// A periodic thread of that shape.
    Periodic(PeriodicShape),
    /// Task number `task` of an rt-app workload, run with the workload's
    /// other tasks (one executor for every canary of the same workload).
    Rtapp {
        workload: Arc<Workload>,
        task: usize,
    },
}

/// One event of canary number `canary`, done on thread `tid`, split.
#[derive(Debug, Clone, Copy)]
pub struct CanaryEvent {
    pub canary: usize,
    pub tid: i32,
    pub split: EventSplit,
}

/// Every canary of a watch, running; dropped, they stop (the periodic
/// ones once `stop` is set) and are joined.
pub struct Canaries {
    periodic: Vec<(usize, Canary)>,
    rtapp: Vec<RtappCanaries>,
}

impl Canaries {
    /// Starts the canaries of `settings`, each handing its events, by its
    /// place in `settings`, to `events` until `stop` (or the drop).
    pub fn start(
        settings: &[CanarySetting],
        loops_per_ms: f64,
        cpus: Option<&CpuList>,
        events: &SyncSender<CanaryEvent>,
        stop: &Arc<AtomicBool>,
    ) -> anyhow::Result<Self> {
        let mut canaries = Self {
            periodic: Vec::new(),
            rtapp: Vec::new(),
        };
        let mut workloads: Vec<(&Arc<Workload>, Vec<(usize, usize)>)> = Vec::new();
        for (canary, setting) in settings.iter().enumerate() {
            match &setting.work {
                CanaryWork::Periodic(shape) => {
                    let run = CanaryRun {
                        canary,
                        shape: *shape,
                        loops_per_ms,
                        cpus: cpus.cloned(),
                    };
                    let started = Canary::start(run, events.clone(), stop.clone(), &setting.name)?;
                    canaries.periodic.push((canary, started));
                }
                CanaryWork::Rtapp { workload, task } => {
                    match workloads.iter_mut().find(|(w, _)| Arc::ptr_eq(w, workload)) {
                        Some((_, tasks)) => tasks.push((*task, canary)),
                        None => workloads.push((workload, vec![(*task, canary)])),
                    }
                }
            }
        }
        for (workload, tasks) in workloads {
            let started = RtappCanaries::start(workload, &tasks, loops_per_ms, cpus, events)?;
            canaries.rtapp.push(started);
        }
        Ok(canaries)
    }

    /// Events canary number `canary` could not hand over so far.
    pub fn dropped(&self, canary: usize) -> u64 {
        let periodic = self.periodic.iter().find(|(c, _)| *c == canary);
        match periodic {
            Some((_, c)) => c.dropped(),
            None => self.rtapp.iter().map(|r| r.dropped(canary)).sum(),
        }
    }
}

impl Drop for Canaries {
    fn drop(&mut self) {
        for rtapp in self.rtapp.drain(..) {
            rtapp.stop();
        }
    }
}

/// A running canary's thread.
pub struct Canary {
    thread: Option<JoinHandle<()>>,
    /// Events it could not hand over (a full queue).
    dropped: Arc<AtomicU64>,
}

/// What a canary runs with.
#[derive(Debug, Clone)]
pub struct CanaryRun {
    pub canary: usize,
    pub shape: PeriodicShape,
    pub loops_per_ms: f64,
    /// The CPUs it is kept on, if any.
    pub cpus: Option<CpuList>,
}

impl Canary {
    /// Starts `run`'s thread, handing its events to `events` until `stop`.
    pub fn start(
        run: CanaryRun,
        events: SyncSender<CanaryEvent>,
        stop: Arc<AtomicBool>,
        name: &str,
    ) -> std::io::Result<Self> {
        let dropped = Arc::new(AtomicU64::new(0));
        let dropped_out = dropped.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fb-canary-{name}"))
            .spawn(move || {
                if let Some(cpus) = &run.cpus {
                    if let Err(e) = affinity::set(cpus) {
                        say!("watch: the canary stays unpinned: {e}");
                    }
                }
                beat(&run, &events, &stop, &dropped_out);
            })?;
        Ok(Self {
            thread: Some(thread),
            dropped,
        })
    }

    /// Events dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The canary's loop: each period, wake at its start, do its work, split
/// and hand over the event; periods whose start has passed when one ends
/// are skipped.
fn beat(run: &CanaryRun, events: &SyncSender<CanaryEvent>, stop: &AtomicBool, dropped: &AtomicU64) {
    let tid = nix::unistd::gettid().as_raw();
    let cpu_time = ThreadCpuTime::open();
    let mut splitter = EventSplitter::open_on(LateAccount::new(), cpu_time.clone());
    let period_ns = run.shape.period_ns;
    let mut index = 0u64;
    let mut due_ns = now_ns() + period_ns;
    while !stop.load(Ordering::Relaxed) {
        sleep_until_ns(due_ns);
        splitter.woke();
        let cpu_wanted_ns = run.shape.cpu_wanted_ns(index);
        if cpu_wanted_ns > 0 {
            work_cpu_ns(&cpu_time, run.loops_per_ms, cpu_wanted_ns);
        }
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: Some(cpu_wanted_ns),
        };
        let split = splitter.ended_by(times, due_ns + period_ns);
        let event = CanaryEvent {
            canary: run.canary,
            tid,
            split,
        };
        if let Err(TrySendError::Full(_)) = events.try_send(event) {
            dropped.fetch_add(1, Ordering::Relaxed);
        }
        let behind = split.ended_ns.saturating_sub(due_ns) / period_ns;
        index += 1 + behind;
        due_ns += period_ns * (1 + behind);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_defaults_exist() {
        for (i, c) in CANARIES.iter().enumerate() {
            assert!(CANARIES[..i].iter().all(|o| o.name != c.name), "{}", c.name);
            assert!(c.threshold_ns > 0 && c.shape.period_ns > 0);
        }
        assert!(DEFAULT.iter().all(|name| find(name).is_some()));
        assert_eq!(find("timer").unwrap().shape.cpu_wanted_ns(7), 0);
    }

    #[test]
    fn a_canary_hands_over_split_events_and_stops() {
        let (events, received) = std::sync::mpsc::sync_channel(64);
        let stop = Arc::new(AtomicBool::new(false));
        let run = CanaryRun {
            canary: 3,
            shape: find("timer").unwrap().shape,
            loops_per_ms: 100_000.0,
            cpus: None,
        };
        let canary = Canary::start(run, events, stop.clone(), "test").unwrap();
        let first = received
            .recv_timeout(std::time::Duration::from_secs(5))
            .unwrap();
        stop.store(true, Ordering::Relaxed);
        drop(canary);
        assert_eq!(first.canary, 3);
        assert!(first.tid > 0);
        assert!(first.split.woke_ns >= first.split.due_ns);
        assert!(first.split.ended_ns >= first.split.woke_ns);
    }
}
