//! `game`: a modern game's frame graph (interbench's `gaming` is one thread
//! burning frames back to back; this is what engines run). Each frame the
//! main thread does its game logic, fans jobs out to a pool of workers and
//! joins them (futex waits, through `std::sync`), then hands the frame to
//! the render thread, which does its draw calls and presents it into a
//! swap chain of `--game-queue` frames; a display thread flips one queued
//! frame at each refresh (`--game-refresh`, FIFO, as vsync does) and frees
//! its slot, which lets the main thread start a frame again. An input
//! thread polls at 1 kHz; an audio thread does short periodic work before
//! each period ends. Every part is sized in CPU time by the calibration
//! (`sim::game` says where each number comes from).
//!
//! Figures: the frame-pacing figures players compare (`figures::frame_pacing`,
//! over the times between presents, what MangoHud and PresentMon log),
//! input-to-present latency (the poll a frame read to the refresh that
//! showed it), the audio periods that missed their deadline, and, for each
//! frame that missed its refresh, the link of its critical path that was
//! late (main, the workers, render, present: the one that took longest past
//! its budget) with that link's cause from its thread's late split.

use super::frame_figures::{
    cpu_figures, desired_column, CPU_RECEIVED_MS, CPU_USED_MS, CPU_WANTED_MS, CPU_WANTED_RUN_MS,
};
use super::late_split::{self, LateSplit};
use super::{MeasureError, Probe, ProbeDef};
use crate::figures::frame_pacing::{
    pacing_columns, pacing_figures, FRAMES, FRAME_TIME, MISSED, STUTTERS,
};
use crate::figures::late::ReadCost;
use crate::figures::result::MEASURED_S;
use crate::figures::{
    Better, Column, FigureDef, Formula, LateCauses, Measured, OverviewRole, ProbeSheet, Spread,
    Tally, Unit,
};
use crate::measure::attrib::Splitting;
use crate::measure::batches::{batch_of, batch_seconds, BatchLatency, BATCHES};
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::cpu_time::ThreadCpuTime;
use crate::measure::late::{EventSplit, EventTimes, LateAccount};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::MemoryPolicy;
use crate::measure::stutter::StutterDetector;
use crate::measure::window::Window;
use crate::measure::work::work_cpu_ns;
use crate::sim::game::{
    GameSettings, AUDIO_CPU_NS, AUDIO_PERIOD_NS, INPUT_CPU_NS, INPUT_PERIOD_NS,
};
use crate::sim::{SettingsGroup, WorkParams};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "game",
    summary: "a game's frame graph: main, worker pool, render, vsync'd present, 1 kHz input, audio",
    method: 1,
    sheet,
    build: |params: &WorkParams| Ok(Box::new(GameProbe::new(params))),
    default: |_| false,
    uses: &[SettingsGroup::Game],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// Input-to-present latency: from the input poll a frame read to the
/// refresh that showed it.
const INPUT_LATENCY: &str = "input_latency";
/// Audio periods run, and those that ended after their period.
const AUDIO_PERIODS: &str = "audio_periods";
const AUDIO_MISSED: &str = "audio_missed";

/// The rule a frame is late by.
const LATE_RULE: &str = "missed its refresh: shown a refresh or more after the one following \
                         the frame before (the late event is the critical path's late link)";

/// Frames whose progress the threads keep at once (more than the queue and
/// the frames being built).
const RING: usize = 8;

/// The links of a frame's critical path, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Main,
    Workers,
    Render,
    Present,
}

impl Link {
    const ALL: [Link; 4] = [Link::Main, Link::Workers, Link::Render, Link::Present];

    /// The count of the missed frames this link made late.
    fn count(self) -> &'static str {
        match self {
            Link::Main => "late_main",
            Link::Workers => "late_workers",
            Link::Render => "late_render",
            Link::Present => "late_present",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Its name, as a late event shows it.
    fn name(self) -> &'static str {
        &self.count()[5..]
    }
}

/// The figures of the game.
fn sheet(summary: &str, _params: Option<&WorkParams>) -> ProbeSheet {
    let mut figures = pacing_figures();
    let input = || INPUT_LATENCY.to_string();
    figures.extend([
        FigureDef::new(
            "input_mean",
            "input_to_present_mean_us",
            "input-to-present latency mean (ms)",
            Unit::Micros,
            Better::Lower,
            Formula::Mean { samples: input() },
        )
        .spread(Spread::SubWindows)
        .compared(),
        FigureDef::new(
            "input_p99",
            "input_to_present_p99_us",
            "input-to-present latency p99 (ms)",
            Unit::Micros,
            Better::Lower,
            Formula::Quantile {
                samples: input(),
                q: 0.99,
            },
        )
        .spread(Spread::SubWindowGroups { min_samples: 100 }),
        FigureDef::new(
            "audio_missed",
            "audio_missed_pct",
            "% of audio periods that missed their deadline",
            Unit::Percent,
            Better::Lower,
            Formula::Ratio {
                num: AUDIO_MISSED.to_string(),
                den: AUDIO_PERIODS.to_string(),
                scale: 100.0,
            },
        )
        .at_most(100.0)
        .compared(),
    ]);
    figures.extend(Link::ALL.map(|link| {
        let name = link.count();
        FigureDef::new(
            name,
            &format!("{name}_pct"),
            &format!("% of missed frames late in {}", link.name()),
            Unit::Percent,
            Better::Lower,
            Formula::Ratio {
                num: name.to_string(),
                den: MISSED.to_string(),
                scale: 100.0,
            },
        )
        .at_most(100.0)
    }));
    figures.extend(cpu_figures());
    let mut columns = pacing_columns();
    columns.extend([
        Column::new("Input p99 (ms)", &["input_p99"], 15),
        Column::new("Audio miss %", &["audio_missed"], 13),
        Column::new("Late: main %", &["late_main"], 13),
        Column::new("workers %", &["late_workers"], 10),
        Column::new("render %", &["late_render"], 9),
        Column::new("present %", &["late_present"], 10),
        desired_column(),
    ]);
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures,
    }
    .with_overview("low1_p99", OverviewRole::ratio("slower"))
    .with_overview("desired", OverviewRole::Share)
}

/// Where one frame is in its graph: the moments each link ended and its
/// split, written by the thread of the link.
#[derive(Debug, Clone, Copy, Default)]
struct FrameSlot {
    /// When its swap-chain slot was freed (the main thread could start).
    slot_free_ns: u64,
    /// When the main thread fanned its jobs out, when the last job ended,
    /// when the main thread handed it to render, when render presented it.
    fanout_ns: u64,
    join_ns: u64,
    handoff_ns: u64,
    submit_ns: u64,
    /// The input poll it read.
    input_ns: u64,
    main: Option<EventSplit>,
    workers: Option<EventSplit>,
    render: Option<EventSplit>,
}

/// The jobs of the frame being built.
#[derive(Debug, Default)]
struct Jobs {
    /// Frames posted so far (the frame being built is `posted - 1`).
    posted: u64,
    taken: u32,
    done: u32,
    fanout_ns: u64,
    /// Frames whose jobs are all done.
    joined: u64,
}

/// The swap chain: frames presented by render and flipped by the display.
#[derive(Debug, Default)]
struct Queue {
    handed: u64,
    submitted: u64,
    presented: u64,
    /// When the last flip freed a slot.
    freed_ns: u64,
}

/// What the threads share.
struct Shared {
    settings: GameSettings,
    loops_per_ms: f64,
    start: Mutex<Option<Window>>,
    started: Condvar,
    stop: AtomicBool,
    jobs: Mutex<Jobs>,
    jobs_posted: Condvar,
    jobs_joined: Condvar,
    queue: Mutex<Queue>,
    handed: Condvar,
    flipped: Condvar,
    slots: Mutex<[FrameSlot; RING]>,
    input_ns: AtomicU64,
    cpu: CpuAccount,
}

/// CPU wanted and received by all the threads' work, per sub-window too.
#[derive(Default)]
struct CpuAccount {
    used_ns: AtomicU64,
    wanted_run_ns: AtomicU64,
    received_ns: [AtomicU64; BATCHES],
}

impl CpuAccount {
    /// Accounts work that wanted `wanted_ns` and used `used_ns`, ending at
    /// `at_ns` in `window`.
    fn add(&self, window: Window, at_ns: u64, wanted_ns: u64, used_ns: u64) {
        self.used_ns.fetch_add(used_ns, Ordering::Relaxed);
        self.wanted_run_ns.fetch_add(wanted_ns, Ordering::Relaxed);
        self.received_ns[batch_of(window, at_ns)]
            .fetch_add(used_ns.min(wanted_ns), Ordering::Relaxed);
    }
}

/// A lock that a panicking thread left is still the frame's state.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits on `condvar` until `done` or the probe stops.
fn wait_until<'a, T>(
    shared: &Shared,
    condvar: &Condvar,
    mut guard: MutexGuard<'a, T>,
    done: impl Fn(&T) -> bool,
) -> MutexGuard<'a, T> {
    while !done(&guard) && !shared.stop.load(Ordering::Acquire) {
        guard = condvar
            .wait_timeout(guard, Duration::from_millis(100))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    guard
}

impl Shared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Waits for the window, opening the thread's split first.
    fn window(&self) -> Window {
        let guard = wait_until(self, &self.started, lock(&self.start), Option::is_some);
        guard.unwrap_or(Window {
            start_ns: 0,
            end_ns: 0,
        })
    }

    /// Does `wanted_ns` of work on the calling thread, whose CPU time is
    /// `cpu_time` (taken once per thread: `Splitting::cpu_time` opens a
    /// counter when nothing splits), accounted.
    fn work(&self, cpu_time: &ThreadCpuTime, window: Window, wanted_ns: u64) {
        let used = work_cpu_ns(cpu_time, self.loops_per_ms, wanted_ns);
        self.cpu.add(window, now_ns(), wanted_ns, used);
    }

    fn slot(&self, frame: u64) -> FrameSlot {
        lock(&self.slots)[frame as usize % RING]
    }

    fn set_slot(&self, frame: u64, set: impl FnOnce(&mut FrameSlot)) {
        set(&mut lock(&self.slots)[frame as usize % RING]);
    }
}

/// The frames the display showed, and everything recorded about them;
/// allocated when the probe is built.
struct FrameRecord {
    frame_time: LatencyHistogram,
    input: LatencyHistogram,
    frame_sum_ns: u64,
    input_sum_ns: u64,
    frames: u64,
    stutters: u64,
    missed: u64,
    late_links: [u64; 4],
    batches: [FrameBatch; BATCHES],
    stutter: StutterDetector,
    late: Option<LateAccount>,
    /// The link of each late frame split (its due and wake-up times), to
    /// name it in the worst late events; at most [`LABELS`].
    labels: Vec<(u64, u64, Link)>,
}

/// Late frames whose link the worst late events can be labelled with.
const LABELS: usize = 16_384;

/// The frames presented in one sub-window.
#[derive(Default)]
struct FrameBatch {
    frame_time: BatchLatency,
    input: BatchLatency,
    stutters: u64,
    missed: u64,
}

impl FrameRecord {
    /// A record for frames of `settings`, split into `late` when the run
    /// splits (logged too when it writes a trace).
    fn new(settings: &GameSettings, late: Option<LateAccount>) -> Self {
        let late_split = late.is_some();
        Self {
            frame_time: LatencyHistogram::new(),
            input: LatencyHistogram::new(),
            frame_sum_ns: 0,
            input_sum_ns: 0,
            frames: 0,
            stutters: 0,
            missed: 0,
            late_links: [0; 4],
            batches: Default::default(),
            stutter: StutterDetector::new(settings.refresh_ns()),
            late,
            labels: Vec::with_capacity(if late_split { LABELS } else { 0 }),
        }
    }

    /// Accounts a frame presented `frame_ns` after the one before it, at
    /// `at_ns` of `window`, whose input was `input_ns` old when shown;
    /// `late_link` is the link that made it miss its refresh, with its
    /// split, or `None` when it did not miss (`on_time` its render split).
    fn record(
        &mut self,
        window: Window,
        at_ns: u64,
        frame_ns: u64,
        input_ns: Option<u64>,
        late_link: Option<(Link, Option<EventSplit>)>,
        on_time: Option<EventSplit>,
    ) {
        let batch = &mut self.batches[batch_of(window, at_ns)];
        self.frames += 1;
        self.frame_time.record_ns(frame_ns);
        self.frame_sum_ns += frame_ns;
        batch.frame_time.record_ns(frame_ns);
        if self.stutter.is_stutter(frame_ns) {
            self.stutters += 1;
            batch.stutters += 1;
        }
        if let Some(ns) = input_ns {
            self.input.record_ns(ns);
            self.input_sum_ns += ns;
            batch.input.record_ns(ns);
        }
        match late_link {
            Some((link, split)) => {
                self.missed += 1;
                batch.missed += 1;
                self.late_links[link.index()] += 1;
                if let (Some(account), Some(split)) = (&mut self.late, split) {
                    account.record(&split, true);
                    account.log(&split, true, false, None);
                    if self.labels.len() < self.labels.capacity() {
                        self.labels.push((split.due_ns, split.woke_ns, link));
                    }
                }
            }
            None => {
                if let (Some(account), Some(split)) = (&mut self.late, on_time) {
                    account.record(&split, false);
                    account.log(&split, false, false, None);
                }
            }
        }
    }
}

/// Which link of a frame that missed its refresh was late: the one that
/// took longest past its budget (`budgets`: main, workers' wall, render);
/// `display_late_ns` is how late the display woke for the refresh the
/// frame was meant for. Pure, for the tests.
fn late_link(slot: &FrameSlot, budgets: [u64; 3], display_late_ns: u64) -> Link {
    let main = (slot.fanout_ns.saturating_sub(slot.slot_free_ns)).saturating_sub(budgets[0])
        + slot.handoff_ns.saturating_sub(slot.join_ns);
    let workers = (slot.join_ns.saturating_sub(slot.fanout_ns)).saturating_sub(budgets[1]);
    let render = (slot.submit_ns.saturating_sub(slot.handoff_ns)).saturating_sub(budgets[2]);
    let excess = [main, workers, render, display_late_ns];
    let mut worst = Link::Main;
    for link in Link::ALL {
        if excess[link.index()] > excess[worst.index()] {
            worst = link;
        }
    }
    worst
}

/// What the audio thread counted.
#[derive(Debug, Default, Clone, Copy)]
struct AudioRecord {
    periods: u64,
    missed: u64,
}

struct GameProbe {
    shared: Arc<Shared>,
    /// The main thread's split, and the other threads' before they start.
    main_late: Option<LateSplit>,
    others_late: Vec<LateSplit>,
    record: Option<FrameRecord>,
    threads: Vec<JoinHandle<()>>,
    display: Option<JoinHandle<FrameRecord>>,
    audio: Option<JoinHandle<AudioRecord>>,
}

impl GameProbe {
    fn new(params: &WorkParams) -> Self {
        let settings = params.game;
        let threads = settings.workers as usize + 4;
        Self {
            shared: Arc::new(Shared {
                settings,
                loops_per_ms: params.loops_per_ms,
                start: Mutex::new(None),
                started: Condvar::new(),
                stop: AtomicBool::new(false),
                jobs: Mutex::default(),
                jobs_posted: Condvar::new(),
                jobs_joined: Condvar::new(),
                queue: Mutex::default(),
                handed: Condvar::new(),
                flipped: Condvar::new(),
                slots: Mutex::new([FrameSlot::default(); RING]),
                input_ns: AtomicU64::new(0),
                cpu: CpuAccount::default(),
            }),
            main_late: Some(LateSplit::new(params)),
            others_late: (0..threads).map(|_| LateSplit::new(params)).collect(),
            record: Some(FrameRecord::new(&settings, late_split::account(params))),
            threads: Vec::new(),
            display: None,
            audio: None,
        }
    }

    /// Starts a named thread running `body` with its own split.
    fn spawn<T: Send + 'static>(
        &mut self,
        name: &str,
        body: impl FnOnce(Arc<Shared>, Splitting) -> T + Send + 'static,
    ) -> Result<JoinHandle<T>, MeasureError> {
        let shared = Arc::clone(&self.shared);
        let late = self.others_late.pop().unwrap_or_else(LateSplit::off);
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || body(shared, late.open_before_window()))
            .map_err(|error| MeasureError::Io {
                what: "cannot start a thread of the game's frame graph",
                error,
            })
    }

    /// Stops every thread and collects what they recorded.
    fn stop(&mut self) -> (Option<FrameRecord>, AudioRecord) {
        self.shared.stop.store(true, Ordering::Release);
        for condvar in [
            &self.shared.started,
            &self.shared.jobs_posted,
            &self.shared.jobs_joined,
            &self.shared.handed,
            &self.shared.flipped,
        ] {
            condvar.notify_all();
        }
        self.threads.drain(..).for_each(|t| {
            let _ = t.join();
        });
        let record = self.display.take().and_then(|t| t.join().ok());
        let audio = self
            .audio
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        (record, audio)
    }
}

impl Drop for GameProbe {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Probe for GameProbe {
    fn prepare(&mut self, _dir: &Path) -> Result<(), MeasureError> {
        for k in 0..self.shared.settings.workers {
            let handle = self.spawn(&format!("fb-game-job{k}"), worker)?;
            self.threads.push(handle);
        }
        let handle = self.spawn("fb-game-render", render)?;
        self.threads.push(handle);
        let handle = self.spawn("fb-game-input", input)?;
        self.threads.push(handle);
        self.audio = Some(self.spawn("fb-game-audio", audio)?);
        let record = self.record.take();
        self.display = Some(self.spawn("fb-game-display", move |shared, splitting| {
            let record = record.expect("the record is taken once");
            display(shared, splitting, record)
        })?);
        Ok(())
    }

    fn measure(mut self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let late = self.main_late.take().unwrap_or_else(LateSplit::off);
        let mut splitting = late.open(window);
        *lock(&self.shared.start) = Some(window);
        self.shared.started.notify_all();
        let frames = main_thread(&self.shared, &mut splitting, window);
        drain(&self.shared, frames, window);
        let (record, audio) = self.stop();
        let record = record.ok_or_else(|| MeasureError::Io {
            what: "the game's display thread",
            error: std::io::Error::other("it panicked"),
        })?;
        let readings = splitting.splitter().map(|splitter| {
            let (reads, ns_per_read) = splitter.cost();
            let cost = ReadCost {
                reads,
                ns_per_read,
                ..ReadCost::default()
            };
            (splitter.has_schedstat(), cost)
        });
        Ok(game_tallies(&self.shared, &record, audio, window, readings))
    }
}

/// The main thread: for each frame, waits for a free slot of the swap
/// chain, does the game logic, fans the jobs out, joins them and hands the
/// frame to render. Returns the frames it started.
fn main_thread(shared: &Shared, splitting: &mut Splitting, window: Window) -> u64 {
    let settings = shared.settings;
    let queue = u64::from(settings.queue);
    let cpu_time = splitting.cpu_time();
    sleep_until_ns(window.start_ns);
    let mut frame = 0;
    loop {
        let guard = wait_until(shared, &shared.flipped, lock(&shared.queue), |q| {
            frame < q.presented + queue
        });
        let slot_free_ns = guard.freed_ns.max(window.start_ns);
        drop(guard);
        if shared.stopped() || now_ns() >= window.end_ns {
            return frame;
        }
        splitting.woke();
        let input_ns = shared.input_ns.load(Ordering::Acquire);
        shared.work(&cpu_time, window, settings.main_cpu_ns());
        let times = EventTimes {
            due_ns: slot_free_ns,
            cpu_wanted_ns: Some(settings.main_cpu_ns()),
        };
        let (fanout_ns, split) = splitting.ended_split(times, false);
        shared.set_slot(frame, |slot| {
            *slot = FrameSlot {
                slot_free_ns,
                fanout_ns,
                input_ns,
                main: split,
                ..FrameSlot::default()
            }
        });
        {
            let mut jobs = lock(&shared.jobs);
            jobs.posted = frame + 1;
            jobs.taken = 0;
            jobs.done = 0;
            jobs.fanout_ns = fanout_ns;
        }
        shared.jobs_posted.notify_all();
        drop(wait_until(
            shared,
            &shared.jobs_joined,
            lock(&shared.jobs),
            |j| j.joined > frame,
        ));
        let handoff_ns = now_ns();
        shared.set_slot(frame, |slot| slot.handoff_ns = handoff_ns);
        lock(&shared.queue).handed = frame + 1;
        shared.handed.notify_all();
        frame += 1;
    }
}

/// Lets the frames started be presented (at most a second past the
/// window).
fn drain(shared: &Shared, frames: u64, window: Window) {
    let give_up_ns = window.end_ns + 1_000_000_000;
    let mut queue = lock(&shared.queue);
    while queue.presented < frames && now_ns() < give_up_ns && !shared.stopped() {
        queue = shared
            .flipped
            .wait_timeout(queue, Duration::from_millis(50))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// A worker: takes the posted frame's jobs until none is left; the one
/// that ends the last job joins the frame.
fn worker(shared: Arc<Shared>, mut splitting: Splitting) {
    let window = shared.window();
    splitting.set_window(window);
    let job_ns = shared.settings.job_cpu_ns();
    let jobs_total = shared.settings.jobs;
    let cpu_time = splitting.cpu_time();
    let mut seen = 0;
    loop {
        let jobs = wait_until(&shared, &shared.jobs_posted, lock(&shared.jobs), |j| {
            j.posted > seen
        });
        if shared.stopped() {
            return;
        }
        let (frame, fanout_ns) = (jobs.posted, jobs.fanout_ns);
        drop(jobs);
        seen = frame;
        splitting.woke();
        let (mut mine, mut last) = (0, false);
        loop {
            {
                let mut jobs = lock(&shared.jobs);
                if jobs.posted != frame || jobs.taken >= jobs_total {
                    break;
                }
                jobs.taken += 1;
            }
            shared.work(&cpu_time, window, job_ns);
            mine += 1;
            let mut jobs = lock(&shared.jobs);
            jobs.done += 1;
            last = jobs.done == jobs_total;
        }
        let times = EventTimes {
            due_ns: fanout_ns,
            cpu_wanted_ns: Some(mine * job_ns),
        };
        let (join_ns, split) = splitting.ended_split(times, false);
        if last {
            shared.set_slot(frame - 1, |slot| {
                slot.join_ns = join_ns;
                slot.workers = split;
            });
            lock(&shared.jobs).joined = frame;
            shared.jobs_joined.notify_all();
        }
    }
}

/// The render thread: does each handed frame's draw calls and presents it.
fn render(shared: Arc<Shared>, mut splitting: Splitting) {
    let window = shared.window();
    splitting.set_window(window);
    let render_ns = shared.settings.render_cpu_ns();
    let cpu_time = splitting.cpu_time();
    let mut done = 0;
    loop {
        let queue = wait_until(&shared, &shared.handed, lock(&shared.queue), |q| {
            q.handed > done
        });
        if shared.stopped() {
            return;
        }
        drop(queue);
        let frame = done;
        splitting.woke();
        shared.work(&cpu_time, window, render_ns);
        let times = EventTimes {
            due_ns: shared.slot(frame).handoff_ns,
            cpu_wanted_ns: Some(render_ns),
        };
        let (submit_ns, split) = splitting.ended_split(times, false);
        shared.set_slot(frame, |slot| {
            slot.submit_ns = submit_ns;
            slot.render = split;
        });
        done += 1;
        lock(&shared.queue).submitted = done;
    }
}

/// The display: at each refresh, flips the oldest presented frame, if
/// any, and accounts it.
fn display(shared: Arc<Shared>, mut splitting: Splitting, mut record: FrameRecord) -> FrameRecord {
    let window = shared.window();
    splitting.set_window(window);
    if let Some(account) = &mut record.late {
        // The frames' events are logged as this thread's, which presents them.
        account.set_thread(nix::unistd::gettid().as_raw() as u32);
    }
    let settings = shared.settings;
    let refresh_ns = settings.refresh_ns();
    let budgets = [
        settings.main_cpu_ns(),
        settings.jobs_wall_ns(),
        settings.render_cpu_ns(),
    ];
    let mut refresh: u64 = 1;
    let mut shown: Option<(u64, u64)> = None;
    let (mut display_late_ns, mut display_split) = (0, None);
    while !shared.stopped() {
        let due_refresh = refresh;
        let due_ns = window.start_ns + refresh * refresh_ns;
        sleep_until_ns(due_ns);
        let woke_ns = splitting.woke();
        let late_ns = woke_ns.saturating_sub(due_ns);
        if late_ns >= refresh_ns {
            // A display thread that wakes late flips at the refresh it reached.
            refresh = (woke_ns - window.start_ns) / refresh_ns;
        }
        let vsync_ns = window.start_ns + refresh * refresh_ns;
        let flipped = {
            let mut queue = lock(&shared.queue);
            (queue.submitted > queue.presented).then(|| {
                queue.presented += 1;
                queue.freed_ns = woke_ns;
                queue.presented - 1
            })
        };
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: None,
        };
        let (_, split) = splitting.ended_split(times, false);
        if shown.is_some_and(|(last, _)| due_refresh == last + 1) {
            // The refresh the next frame was meant for: how late the
            // display itself woke for it.
            (display_late_ns, display_split) = (late_ns, split);
        }
        if let Some(frame) = flipped {
            shared.flipped.notify_all();
            let slot = shared.slot(frame);
            let missed = shown.is_some_and(|(last, _)| refresh > last + 1);
            let late = missed.then(|| {
                let link = late_link(&slot, budgets, display_late_ns);
                let split = match link {
                    Link::Main => slot.main,
                    Link::Workers => slot.workers,
                    Link::Render => slot.render,
                    Link::Present => display_split,
                };
                (link, split)
            });
            if let Some((_, last_submit_ns)) = shown {
                let input = (slot.input_ns > 0).then(|| vsync_ns.saturating_sub(slot.input_ns));
                let frame_ns = slot.submit_ns.saturating_sub(last_submit_ns).max(1);
                record.record(window, vsync_ns, frame_ns, input, late, slot.render);
            }
            shown = Some((refresh, slot.submit_ns));
            (display_late_ns, display_split) = (0, None);
        }
        refresh += 1;
    }
    record
}

/// The input thread: a poll every millisecond, its time published for the
/// main thread to read.
fn input(shared: Arc<Shared>, splitting: Splitting) {
    let window = shared.window();
    let cpu_time = splitting.cpu_time();
    let mut due_ns = window.start_ns;
    while !shared.stopped() && due_ns < window.end_ns {
        sleep_until_ns(due_ns);
        shared.input_ns.store(due_ns, Ordering::Release);
        shared.work(&cpu_time, window, INPUT_CPU_NS);
        due_ns = next_period(due_ns, INPUT_PERIOD_NS, now_ns());
    }
}

/// The audio thread: each period's work must end before the next period;
/// a period that does not, or that is skipped, is missed.
fn audio(shared: Arc<Shared>, splitting: Splitting) -> AudioRecord {
    let window = shared.window();
    let cpu_time = splitting.cpu_time();
    let mut record = AudioRecord::default();
    let mut due_ns = window.start_ns;
    while !shared.stopped() && due_ns < window.end_ns {
        sleep_until_ns(due_ns);
        shared.work(&cpu_time, window, AUDIO_CPU_NS);
        let ended_ns = now_ns();
        let next_ns = next_period(due_ns, AUDIO_PERIOD_NS, ended_ns);
        let periods = (next_ns - due_ns) / AUDIO_PERIOD_NS;
        record.periods += periods;
        record.missed += periods - 1 + u64::from(ended_ns > due_ns + AUDIO_PERIOD_NS);
        due_ns = next_ns;
    }
    record
}

/// The next start of a period of `period_ns` after one due at `due_ns`:
/// the one after it, or, when `now_ns` is past that, the first one not yet
/// begun.
fn next_period(due_ns: u64, period_ns: u64, now_ns: u64) -> u64 {
    let next = due_ns + period_ns;
    if now_ns < next {
        return next;
    }
    next + (now_ns - next) / period_ns * period_ns + period_ns
}

/// The tallies of a measurement of `window`.
/// `readings`: whether run-queue wait was read, and what the main
/// thread's readings cost.
fn game_tallies(
    shared: &Shared,
    record: &FrameRecord,
    audio: AudioRecord,
    window: Window,
    readings: Option<(bool, ReadCost)>,
) -> Measured {
    let settings = shared.settings;
    let measured_s = window.end_ns.saturating_sub(window.start_ns) as f64 / 1e9;
    let frame_cpu_s = settings.frame_cpu_ns() as f64 / settings.refresh_ns() as f64
        + AUDIO_CPU_NS as f64 / AUDIO_PERIOD_NS as f64
        + INPUT_CPU_NS as f64 / INPUT_PERIOD_NS as f64;
    let received = |k: usize| shared.cpu.received_ns[k].load(Ordering::Relaxed) as f64 / 1e6;
    let received_ms: f64 = (0..BATCHES).map(received).sum();
    let mut tally = Tally::default()
        .with_samples(FRAME_TIME, &record.frame_time, record.frame_sum_ns)
        .with_samples(INPUT_LATENCY, &record.input, record.input_sum_ns)
        .with_count(FRAMES, record.frames as f64)
        .with_count(STUTTERS, record.stutters as f64)
        .with_count(MISSED, record.missed as f64)
        .with_count(AUDIO_PERIODS, audio.periods as f64)
        .with_count(AUDIO_MISSED, audio.missed as f64)
        .with_count(MEASURED_S, measured_s)
        .with_count(CPU_WANTED_MS, measured_s * 1e3 * frame_cpu_s)
        .with_count(CPU_RECEIVED_MS, received_ms)
        .with_count(
            CPU_USED_MS,
            shared.cpu.used_ns.load(Ordering::Relaxed) as f64 / 1e6,
        )
        .with_count(
            CPU_WANTED_RUN_MS,
            shared.cpu.wanted_run_ns.load(Ordering::Relaxed) as f64 / 1e6,
        );
    for link in Link::ALL {
        tally = tally.with_count(link.count(), record.late_links[link.index()] as f64);
    }
    let seconds = batch_seconds(window);
    let batches = record
        .batches
        .iter()
        .enumerate()
        .map(|(k, batch)| {
            Tally::default()
                .with_samples(
                    FRAME_TIME,
                    batch.frame_time.histogram(),
                    batch.frame_time.sum_ns(),
                )
                .with_samples(INPUT_LATENCY, batch.input.histogram(), batch.input.sum_ns())
                .with_count(FRAMES, batch.frame_time.count() as f64)
                .with_count(STUTTERS, batch.stutters as f64)
                .with_count(MISSED, batch.missed as f64)
                .with_count(MEASURED_S, seconds)
                .with_count(CPU_WANTED_MS, seconds * 1e3 * frame_cpu_s)
                .with_count(CPU_RECEIVED_MS, received(k))
        })
        .collect();
    let (schedstat, cost) = readings.unwrap_or((false, ReadCost::default()));
    let late = record.late.as_ref().map(|account| {
        let mut causes = LateCauses::of(account, LATE_RULE, schedstat, cost);
        for event in &mut causes.worst {
            event.link = record
                .labels
                .iter()
                .find(|(due, woke, _)| (*due, *woke) == (event.due_ns, event.woke_ns))
                .map(|(_, _, link)| link.name().to_string());
        }
        causes
    });
    Measured {
        late,
        ..Measured::of(tally, batches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A frame whose slot freed at 0: main ran 0–3 ms (budget 2), jobs
    /// 3–12 ms (budget 6), render 12–14 (budget 2).
    fn slot() -> FrameSlot {
        FrameSlot {
            slot_free_ns: 0,
            fanout_ns: 3 * MS,
            join_ns: 12 * MS,
            handoff_ns: 12 * MS,
            submit_ns: 14 * MS,
            ..FrameSlot::default()
        }
    }

    #[test]
    fn the_late_link_is_the_one_furthest_past_its_budget() {
        let budgets = [2 * MS, 6 * MS, 2 * MS];
        assert_eq!(late_link(&slot(), budgets, 0), Link::Workers);
        assert_eq!(late_link(&slot(), budgets, 4 * MS), Link::Present);
        let slow_render = FrameSlot {
            submit_ns: 20 * MS,
            ..slot()
        };
        assert_eq!(late_link(&slow_render, budgets, 0), Link::Render);
        // Main woke 5 ms late to hand the joined frame over.
        let slow_handoff = FrameSlot {
            handoff_ns: 17 * MS,
            submit_ns: 19 * MS,
            ..slot()
        };
        assert_eq!(late_link(&slow_handoff, budgets, 0), Link::Main);
        // Nothing past its budget: the frame's own work was too much for
        // the refresh, counted on main, where the frame begins.
        let on_budget = FrameSlot {
            fanout_ns: 2 * MS,
            join_ns: 8 * MS,
            handoff_ns: 8 * MS,
            submit_ns: 10 * MS,
            ..slot()
        };
        assert_eq!(late_link(&on_budget, budgets, 0), Link::Main);
    }

    #[test]
    fn a_period_overrun_skips_to_the_first_period_not_begun() {
        assert_eq!(next_period(0, 10, 3), 10);
        assert_eq!(next_period(0, 10, 10), 20);
        assert_eq!(next_period(0, 10, 25), 30);
    }

    /// Scripted frames: 10 ms apart, the 51st (40 ms) missed its refresh by
    /// its workers and is a stutter; each is counted once, in its
    /// sub-window.
    #[test]
    fn recorded_frames_make_the_pacing_figures() {
        let window = Window::ms(0, 1_000);
        let mut record = FrameRecord::new(&GameSettings::default(), None);
        for k in 0..100u64 {
            let late = (k == 50).then_some((Link::Workers, None));
            let frame_ns = if k == 50 { 40 * MS } else { 10 * MS };
            record.record(window, k * 10 * MS, frame_ns, Some(5 * MS), late, None);
        }
        assert_eq!((record.frames, record.missed, record.stutters), (100, 1, 1));
        assert_eq!(record.late_links, [0, 1, 0, 0]);
        assert_eq!(record.batches[10].missed, 1);
        assert_eq!(record.batches[10].stutters, 1);
        assert_eq!(record.input.len(), 100);
        assert!(record.late.is_none(), "no split asked, no account");
    }
}
