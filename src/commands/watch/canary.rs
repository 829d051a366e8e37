//! The canaries: small periodic tasks that stand in for interactive
//! programs, each a thread of `watch` at the user's ordinary scheduling.
//! A canary wakes at each period's absolute start (as cyclictest does),
//! or, the `fragment` canary, when a slot of its modelled sound device's
//! buffer frees (the `fragment` probe's player), does its frame's CPU work
//! (`measure::work`, none for the timer), and splits each event's delay
//! as a run's probe does (`measure::attrib`),
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
use crate::sim::fragment::{Device, FragmentSettings};
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
    pub beat: Beat,
    /// An event later than this is an incident, unless `--threshold` says.
    pub threshold_ns: u64,
}

const MS: u64 = 1_000_000;

/// The canaries, the default ones first.
pub const CANARIES: [CanaryDef; 6] = [
    CanaryDef {
        name: "timer",
        summary: "a 1 ms timer and no work, as cyclictest",
        beat: Beat::Periodic(PeriodicShape {
            period_ns: MS,
            cpu: CpuDemand::Share(0.0),
        }),
        threshold_ns: 2 * MS,
    },
    CanaryDef {
        name: "frame",
        summary: "60 frames a second, each 3 % of its period's CPU (0.5 ms)",
        beat: Beat::Periodic(PeriodicShape {
            period_ns: 16_666_667,
            cpu: CpuDemand::Share(3.0),
        }),
        threshold_ns: 8 * MS,
    },
    CanaryDef {
        name: "x",
        summary: "the x probe: 10 ms pointer events, redraw work sweeping 0-100 %",
        beat: Beat::Periodic(shapes::X),
        threshold_ns: 10 * MS,
    },
    CanaryDef {
        name: "audio",
        summary: "the audio probe: every 50 ms, 5 % of a CPU",
        beat: Beat::Periodic(shapes::AUDIO),
        threshold_ns: 10 * MS,
    },
    CanaryDef {
        name: "video",
        summary: "the video probe: 60 frames a second, 40 % of each period",
        beat: Beat::Periodic(shapes::VIDEO),
        threshold_ns: 8 * MS,
    },
    CanaryDef {
        name: "fragment",
        summary: "the fragment probe: latencytest's player, 3 x 1.45 ms fragments, 10 % CPU",
        beat: Beat::Fragment(FragmentSettings::LATENCYTEST),
        // The buffer's margin: a write this late finds the device empty.
        threshold_ns: 2_902_494,
    },
];

/// How a canary's thread paces its events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Beat {
    /// At each period's start; a period whose start passed is skipped.
    Periodic(PeriodicShape),
    /// A write of latencytest's player each time a slot of its modelled
    /// sound device's buffer frees; late, for the late account, when the
    /// device ran dry before it (an underrun).
    Fragment(FragmentSettings),
}

impl Beat {
    /// Its period: a periodic one's, or the time one fragment plays.
    pub fn period_ns(&self) -> u64 {
        match self {
            Beat::Periodic(shape) => shape.period_ns,
            Beat::Fragment(settings) => settings.fragment_ns(),
        }
    }
}

/// The default threshold of a canary of period `period_ns` that has none
/// of its own (a custom canary, an rt-app task): half its period, at
/// least 1 ms.
pub fn default_threshold_ns(period_ns: u64) -> u64 {
    (period_ns / 2).max(1_000_000)
}

/// Hands `event` to the watch without blocking; a full queue drops it and
/// counts it in `dropped`.
pub fn hand_over(events: &SyncSender<CanaryEvent>, event: CanaryEvent, dropped: &AtomicU64) {
    if let Err(TrySendError::Full(_)) = events.try_send(event) {
        dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// The canaries `watch` runs when none is named.
pub const DEFAULT: [&str; 2] = ["timer", "frame"];

/// The width of a column of canary `names`: the longest (an rt-app task's
/// is long), at least its header's, `canary`.
pub fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(str::len).max().unwrap_or(0).max("canary".len())
}

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
    /// A thread of its own, paced so.
    Beat(Beat),
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

/// Tasks of an rt-app workload and the canary each one is: `(task,
/// canary)`.
type TaskCanaries = Vec<(usize, usize)>;

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
        // Each workload with its `(task, canary)`s.
        let mut workloads: Vec<(&Arc<Workload>, TaskCanaries)> = Vec::new();
        for (canary, setting) in settings.iter().enumerate() {
            match &setting.work {
                CanaryWork::Beat(beat) => {
                    let run = CanaryRun {
                        canary,
                        beat: *beat,
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
    pub beat: Beat,
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

/// The canary's loop: wake when the next event is due, do its work, split
/// and hand over the event, until `stop`.
fn beat(run: &CanaryRun, events: &SyncSender<CanaryEvent>, stop: &AtomicBool, dropped: &AtomicU64) {
    let tid = nix::unistd::gettid().as_raw();
    let cpu_time = ThreadCpuTime::open();
    let mut splitter = EventSplitter::open_on(LateAccount::new(), cpu_time.clone());
    let mut pacer = Pacer::new(run.beat, now_ns());
    while !stop.load(Ordering::Relaxed) {
        let due_ns = pacer.due_ns();
        sleep_until_ns(due_ns);
        splitter.woke();
        let cpu_wanted_ns = pacer.cpu_wanted_ns();
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: Some(cpu_wanted_ns),
        };
        let split = match cpu_wanted_ns {
            // The timer's events end as they wake: one reading, not two.
            0 => splitter.ended_at_wake(times, pacer.allowed_ns()),
            _ => {
                work_cpu_ns(&cpu_time, run.loops_per_ms, cpu_wanted_ns);
                splitter.ended_by(times, pacer.allowed_ns())
            }
        };
        let event = CanaryEvent {
            canary: run.canary,
            tid,
            split,
        };
        hand_over(events, event, dropped);
        pacer.ended(split.ended_ns);
    }
}

/// When a canary's next event is due, what it wants and until when it is
/// allowed.
#[derive(Debug)]
enum Pacer {
    /// Event `index`, due at `due_ns`.
    Periodic {
        shape: PeriodicShape,
        index: u64,
        due_ns: u64,
    },
    /// The device the player writes to, and the CPU work per fragment.
    Fragment { device: Device, cpu_ns: u64 },
}

impl Pacer {
    /// The pace of `beat` from `now_ns` (a device full at `now_ns`).
    fn new(beat: Beat, now_ns: u64) -> Self {
        match beat {
            Beat::Periodic(shape) => Pacer::Periodic {
                shape,
                index: 0,
                due_ns: now_ns + shape.period_ns,
            },
            Beat::Fragment(settings) => Pacer::Fragment {
                device: Device::started(&settings, now_ns),
                cpu_ns: settings.cpu_ns(),
            },
        }
    }

    /// When the next event is due: its period's start, or when a slot of
    /// the buffer frees.
    fn due_ns(&self) -> u64 {
        match self {
            Pacer::Periodic { due_ns, .. } => *due_ns,
            Pacer::Fragment { device, .. } => device.free_at_ns(),
        }
    }

    /// The CPU work the next event wants.
    fn cpu_wanted_ns(&self) -> u64 {
        match self {
            Pacer::Periodic { shape, index, .. } => shape.cpu_wanted_ns(*index),
            Pacer::Fragment { cpu_ns, .. } => *cpu_ns,
        }
    }

    /// Until when the next event may end and be on time: its period's
    /// end, or when the device runs dry.
    fn allowed_ns(&self) -> u64 {
        match self {
            Pacer::Periodic { shape, due_ns, .. } => due_ns + shape.period_ns,
            Pacer::Fragment { device, .. } => device.drained_ns,
        }
    }

    /// The event ended at `ended_ns`: the periods whose start had passed
    /// are skipped; the fragment is written.
    fn ended(&mut self, ended_ns: u64) {
        match self {
            Pacer::Periodic {
                shape,
                index,
                due_ns,
            } => {
                let behind = ended_ns.saturating_sub(*due_ns) / shape.period_ns;
                *index += 1 + behind;
                *due_ns += shape.period_ns * (1 + behind);
            }
            Pacer::Fragment { device, .. } => {
                device.write(ended_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_defaults_exist() {
        for (i, c) in CANARIES.iter().enumerate() {
            assert!(CANARIES[..i].iter().all(|o| o.name != c.name), "{}", c.name);
            assert!(c.threshold_ns > 0 && c.beat.period_ns() > 0);
        }
        assert!(DEFAULT.iter().all(|name| find(name).is_some()));
        let timer = Pacer::new(find("timer").unwrap().beat, 0);
        assert_eq!(timer.cpu_wanted_ns(), 0);
    }

    #[test]
    fn a_periodic_pace_skips_the_periods_whose_start_passed() {
        let shape = PeriodicShape {
            period_ns: 10 * MS,
            cpu: CpuDemand::Sweep,
        };
        let mut pacer = Pacer::new(Beat::Periodic(shape), 0);
        assert_eq!((pacer.due_ns(), pacer.allowed_ns()), (10 * MS, 20 * MS));
        pacer.ended(11 * MS);
        assert_eq!((pacer.due_ns(), pacer.cpu_wanted_ns()), (20 * MS, 100_000));
        // Ended 25 ms after it was due: the two periods begun are skipped.
        pacer.ended(45 * MS);
        assert_eq!((pacer.due_ns(), pacer.cpu_wanted_ns()), (50 * MS, 400_000));
    }

    /// The fragment canary's threshold is its buffer's margin: two
    /// fragments of latencytest's 1.45 ms.
    #[test]
    fn the_fragment_pace_is_its_devices_and_its_threshold_the_buffers_margin() {
        let def = find("fragment").unwrap();
        let Beat::Fragment(settings) = def.beat else {
            panic!("not a fragment canary");
        };
        assert_eq!(def.threshold_ns, 2 * settings.fragment_ns());
        let fragment_ns = settings.fragment_ns();
        let mut pacer = Pacer::new(def.beat, 0);
        assert_eq!(
            pacer.due_ns(),
            fragment_ns,
            "a slot frees as the first fragment ends"
        );
        assert_eq!(
            pacer.allowed_ns(),
            3 * fragment_ns,
            "until the buffer is empty"
        );
        assert_eq!(pacer.cpu_wanted_ns(), settings.cpu_ns());
        pacer.ended(fragment_ns + 100_000);
        assert_eq!(pacer.due_ns(), 2 * fragment_ns);
    }

    #[test]
    fn a_canary_hands_over_split_events_and_stops() {
        let (events, received) = std::sync::mpsc::sync_channel(64);
        let stop = Arc::new(AtomicBool::new(false));
        let run = CanaryRun {
            canary: 3,
            beat: find("timer").unwrap().beat,
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
