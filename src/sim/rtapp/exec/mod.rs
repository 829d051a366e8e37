//! Runs a workload's tasks on threads of the calling process, as rt-app
//! does: `instance` threads per task (a `fork` event starts one more of a
//! task), each running its phases in order, each phase its `loops` times,
//! the task's `loop` times or until the deadline; every wait ends at the
//! deadline; `mem` and `iorun` go through a buffer of the workload's
//! `mem_buffer_size` per thread, `iorun` writing to the null device. Each
//! thread records its activations and phase loops into a
//! [`ThreadRecord`] made when the executor is built, and hands the split
//! of each activation's work to an [`EventSink`] when given one. Used by
//! the `rtapp` probe (which measures the records), the `rtapp` load (which
//! counts the phase loops done) and `watch`'s rt-app canaries (which take
//! each split from the sink, and stop the threads when the watch ends).
//! Inside the window nothing is allocated but by a `fork` (a thread), a
//! phase change that sets CPUs (a CPU set) and a first scheduling failure
//! (its message).

pub mod record;
mod sched;
pub mod shared;
pub mod timer;

use record::ActivationTimes;
pub use record::ThreadRecord;

use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::late::EventSplit;
use crate::measure::sched::set_thread_name;
use crate::measure::window::Window;
use crate::measure::work::{burn_loops, loops_for_ns};
use crate::sim::rtapp::model::{Event, Phase, Policy, Sched, Task, TimerMode, Workload};
use shared::{is_unique, Deadline, Shared};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use timer::TimerGrid;

/// Threads a `fork` event may start per task over a whole run: their
/// records are made up front.
pub const FORK_SLOTS: usize = 8;

/// A workload ready to run: its shared resources and a record for every
/// thread it may start.
pub struct Executor {
    workload: Workload,
    resources: Shared,
    loops_per_ms: f64,
    /// Records of the threads started at once, with their task.
    starting: Vec<ThreadRecord>,
    /// Records for the threads `fork` starts.
    fork_records: Vec<ThreadRecord>,
    sink: Option<Arc<dyn EventSink>>,
}

/// Where each activation's split goes as soon as it is made, on the
/// thread that made it (it must not block).
pub trait EventSink: Send + Sync {
    /// The work after an activation of task number `task`, done on thread
    /// `tid`, split.
    fn event(&self, task: usize, tid: i32, split: &EventSplit);
}

/// What every thread of one execution reads.
struct RunShared {
    workload: Workload,
    resources: Shared,
    loops_per_ms: f64,
    window: Window,
    /// No event begins at or after this time.
    deadline: Deadline,
    /// Where `iorun` writes, when some task has one: the null device, as
    /// rt-app's default `io_device` (a file never names a path here).
    io_device: Option<File>,
    /// Phase loops done by every thread (the load's work).
    loops_done: AtomicU64,
    /// Records for the threads `fork` starts.
    fork_records: Mutex<Vec<ThreadRecord>>,
    /// The threads `fork` started, to be joined.
    forked: Mutex<Vec<JoinHandle<ThreadRecord>>>,
    sink: Option<Arc<dyn EventSink>>,
}

/// The executor running in the background (the load, a watch's canaries).
pub struct Running {
    run: Arc<RunShared>,
    /// The threads started at once.
    threads: Vec<JoinHandle<ThreadRecord>>,
}

impl Running {
    /// Phase loops done so far by every thread.
    pub fn loops_done(&self) -> u64 {
        self.run.loops_done.load(Ordering::Relaxed)
    }

    /// Stops every thread: no event begins from now on, every wait for
    /// the workload's own threads ends at once (a sleep or timer under way
    /// ends as it would); returns their records once all have ended.
    pub fn stop(self) -> Vec<ThreadRecord> {
        self.run.deadline.bring_forward(now_ns());
        self.run.resources.wake_all();
        self.join()
    }

    /// Waits for every thread to end (those started at once, then those
    /// `fork` started); their records.
    fn join(self) -> Vec<ThreadRecord> {
        let mut records: Vec<ThreadRecord> = self
            .threads
            .into_iter()
            .filter_map(|t| t.join().ok())
            .collect();
        let forked =
            std::mem::take(&mut *self.run.forked.lock().unwrap_or_else(|p| p.into_inner()));
        records.extend(forked.into_iter().filter_map(|t| t.join().ok()));
        records
    }
}

impl Executor {
    /// An executor of `workload`, whose `run` is worth `loops_per_ms` work
    /// loops per ms, with every record it fills made; `split`: each thread
    /// of a task with a timer splits the work after its wake-ups into the
    /// causes of its delay.
    pub fn new(workload: &Workload, loops_per_ms: f64, split: bool) -> Self {
        let mut starting = Vec::new();
        let mut fork_records = Vec::new();
        for (index, task) in workload.tasks.iter().enumerate() {
            let record = || ThreadRecord::new(index, task.phases.len(), split && task.has_timer());
            starting.extend((0..task.instances).map(|_| record()));
            if forked(workload, &task.name) {
                fork_records.extend((0..FORK_SLOTS).map(|_| record()));
            }
        }
        Self {
            workload: workload.clone(),
            resources: Shared::of(workload),
            loops_per_ms,
            starting,
            fork_records,
            sink: None,
        }
    }

    /// The executor that hands each activation's split to `sink` (only
    /// the threads that split make one: see [`Executor::new`]).
    pub fn with_sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The executor whose threads started at once log up to `capacity`
    /// events each for `run --trace` (0: none), where they split them.
    pub fn logging(mut self, capacity: usize) -> Self {
        if capacity > 0 {
            for record in &mut self.starting {
                record.log_events(capacity);
            }
        }
        self
    }

    /// What the threads share over `window` (they start at its start and
    /// begin no event after its end, or after the workload's own duration
    /// if shorter); and the records of the threads started at once. Fails
    /// when `iorun`'s device cannot be opened.
    fn open(self, window: Window) -> Result<(Arc<RunShared>, Vec<ThreadRecord>), IoDeviceError> {
        let deadline_ns = match self.workload.duration_s {
            Some(s) => window.end_ns.min(window.start_ns + (s * 1e9) as u64),
            None => window.end_ns,
        };
        let open = |mut records: Vec<ThreadRecord>| {
            records.iter_mut().for_each(|r| r.open(window));
            records
        };
        let io_device = match self.workload.has_iorun() {
            true => Some(
                File::options()
                    .write(true)
                    .open(IO_DEVICE)
                    .map_err(IoDeviceError)?,
            ),
            false => None,
        };
        let run = RunShared {
            workload: self.workload,
            resources: self.resources,
            loops_per_ms: self.loops_per_ms,
            window,
            deadline: Deadline::at(deadline_ns),
            io_device,
            loops_done: AtomicU64::new(0),
            forked: Mutex::new(Vec::with_capacity(self.fork_records.len())),
            fork_records: Mutex::new(open(self.fork_records)),
            sink: self.sink,
        };
        Ok((Arc::new(run), open(self.starting)))
    }

    /// Runs every task over `window` until its end or until all ended;
    /// returns the records of every thread that ran.
    pub fn run(self, window: Window) -> Result<Vec<ThreadRecord>, IoDeviceError> {
        Ok(self.start(window)?.join())
    }

    /// Starts every task in the background over `window`; the threads end
    /// at its end, at [`Running::stop`] or with the process.
    pub fn start(self, window: Window) -> Result<Running, IoDeviceError> {
        let (run, starting) = self.open(window)?;
        let threads = starting.into_iter().map(|r| spawn(&run, r)).collect();
        Ok(Running { run, threads })
    }
}

/// The device `iorun` writes to: rt-app's default `io_device`.
pub const IO_DEVICE: &str = "/dev/null";

/// `iorun`'s device cannot be opened for writing.
#[derive(Debug, thiserror::Error)]
#[error("iorun cannot open {IO_DEVICE} for writing (rt-app's io_device): {0}")]
pub struct IoDeviceError(pub std::io::Error);

/// Whether some event of `workload` forks task `name`.
fn forked(workload: &Workload, name: &str) -> bool {
    workload
        .tasks
        .iter()
        .flat_map(|t| &t.phases)
        .flat_map(|p| &p.events)
        .any(|e| matches!(e, Event::Fork { task } if task == name))
}

/// Starts a thread of the task `record` belongs to.
fn spawn(run: &Arc<RunShared>, record: ThreadRecord) -> JoinHandle<ThreadRecord> {
    let run = Arc::clone(run);
    std::thread::spawn(move || {
        let mut thread = TaskThread::new(&run, Arc::clone(&run), record);
        thread.run();
        thread.record
    })
}

/// One thread of a task: its record, its own timers and buffers.
struct TaskThread<'a> {
    run: &'a RunShared,
    /// The same, to start forked threads with.
    owner: Arc<RunShared>,
    task: &'a Task,
    record: ThreadRecord,
    /// The thread's `unique…` timers.
    own_timers: Vec<(&'a str, TimerGrid)>,
    /// The buffer `mem` writes and `iorun` writes out, as rt-app's
    /// `mem_buffer_size` (empty when the task has neither).
    buffer: Vec<u8>,
    /// CPU-bound part of each phase (`run` + `runtime`), in ns.
    phase_run_ns: Vec<u64>,
    /// When the current phase's last loop began: its achieved period runs
    /// from there to the next loop, while the thread stays in the phase (a
    /// task of one phase stays in it from round to round).
    last_loop_ns: Option<u64>,
    /// The scheduling each phase sets when it begins (`None`: none).
    phase_sched: Vec<Option<Sched>>,
    /// The phase entered last.
    current: Option<usize>,
    /// The policy the last phase that set one set.
    policy_now: Option<Policy>,
    /// Where its timers' grids start (rt-app's `t_first`): the window's
    /// start plus the task's delay, for a forked thread too.
    origin_ns: u64,
    /// Its thread id, for the sink.
    tid: i32,
}

impl<'a> TaskThread<'a> {
    /// Everything the thread uses, made before it starts.
    fn new(run: &'a RunShared, owner: Arc<RunShared>, record: ThreadRecord) -> Self {
        let task = &run.workload.tasks[record.task];
        let events = || task.phases.iter().flat_map(|p| &p.events);
        let mut own_timers: Vec<(&str, TimerGrid)> = Vec::new();
        let mut buffered = false;
        for event in events() {
            match event {
                Event::Timer { name, .. }
                    if is_unique(name) && !own_timers.iter().any(|(n, _)| n == name) =>
                {
                    own_timers.push((name, TimerGrid::default()));
                }
                Event::Mem { .. } | Event::Iorun { .. } => buffered = true,
                _ => {}
            }
        }
        let buffer_bytes = match buffered {
            true => run.workload.mem_buffer_bytes as usize,
            false => 0,
        };
        Self {
            run,
            owner,
            task,
            record,
            own_timers,
            buffer: vec![1; buffer_bytes],
            phase_run_ns: task.phases.iter().map(phase_run_ns).collect(),
            last_loop_ns: None,
            phase_sched: task
                .phases
                .iter()
                .map(|p| sched::effective(&p.sched, &task.sched, run.workload.default_policy))
                .collect(),
            current: None,
            policy_now: None,
            origin_ns: run.window.start_ns + task.delay_us * 1000,
            tid: nix::unistd::gettid().as_raw(),
        }
    }

    /// The task's phases, in order, its `loop` times or until the deadline,
    /// on a thread named as the task (as rt-app names its threads: `ps`, a
    /// trace and `--explain` show it).
    fn run(&mut self) {
        set_thread_name(&self.task.name);
        self.record.start_splitting();
        sleep_until_ns(self.origin_ns);
        let mut round = 0;
        while self.task.loops.is_none_or(|n| round < n) {
            for (index, phase) in self.task.phases.iter().enumerate() {
                if !self.phase(index, phase) {
                    return;
                }
            }
            round += 1;
        }
    }

    /// Runs a phase `loops` times; false once the deadline passed.
    fn phase(&mut self, index: usize, phase: &'a Phase) -> bool {
        if self.current != Some(index) {
            self.current = Some(index);
            self.last_loop_ns = None;
            if let Some(effective) = &self.phase_sched[index] {
                let policy = sched::policy(&phase.sched, effective, self.policy_now);
                match sched::apply(effective, policy) {
                    Ok(()) => self.policy_now = Some(policy),
                    Err(why) => {
                        self.record.failure.get_or_insert(why);
                    }
                }
            }
        }
        for _ in 0..phase.loops {
            let began_ns = now_ns();
            if began_ns >= self.run.deadline.ns() {
                return false;
            }
            self.record
                .phase_loop(index, began_ns, self.last_loop_ns.replace(began_ns));
            for event in &phase.events {
                if !self.event(event, index) {
                    return false;
                }
            }
            self.run.loops_done.fetch_add(1, Ordering::Relaxed);
        }
        true
    }

    /// Runs one event of phase `phase`; false once the deadline passed (or
    /// came during a wait).
    fn event(&mut self, event: &'a Event, phase: usize) -> bool {
        let began_ns = now_ns();
        let deadline = &self.run.deadline;
        let deadline_ns = deadline.ns();
        if began_ns >= deadline_ns {
            return false;
        }
        let shared = &self.run.resources;
        // The time a wait for the workload's own threads took: its own
        // wait, not a delay (see `ThreadRecord::waited`).
        let waited = |record: &mut ThreadRecord, went_on: bool| {
            record.waited(now_ns().saturating_sub(began_ns));
            went_on
        };
        match event {
            Event::Run { us } => {
                self.record.ran(us * 1000);
                burn_loops(loops_for_ns(self.run.loops_per_ms, us * 1000));
            }
            Event::Runtime { us } => {
                self.record.ran(us * 1000);
                let until_ns = began_ns + us * 1000;
                while now_ns() < until_ns {
                    burn_loops(loops_for_ns(self.run.loops_per_ms, 10_000).max(1));
                }
            }
            Event::Sleep { us } => {
                self.record.waited(us * 1000);
                sleep_until_ns((began_ns + us * 1000).min(deadline_ns));
            }
            Event::Timer {
                name,
                period_us,
                mode,
            } => return self.timer(name, period_us * 1000, *mode, began_ns, phase),
            Event::Barrier { name } => {
                return waited(&mut self.record, shared.barrier(name, deadline))
            }
            Event::Suspend { name } => {
                return waited(&mut self.record, shared.suspend(name, deadline))
            }
            Event::Resume { name } => shared.resume(name),
            Event::Lock { mutex } => return waited(&mut self.record, shared.lock(mutex, deadline)),
            Event::Unlock { mutex } => shared.unlock(mutex),
            Event::Wait { cond, mutex } => {
                return waited(&mut self.record, shared.wait(cond, mutex, deadline))
            }
            Event::Signal { cond } => shared.signal(cond, false),
            Event::Broad { cond } => shared.signal(cond, true),
            Event::Sync { cond, mutex } => {
                shared.signal(cond, false);
                return waited(&mut self.record, shared.wait(cond, mutex, deadline));
            }
            Event::Fork { task } => self.fork(task),
            Event::Mem { bytes } => {
                for size in chunks(*bytes, self.buffer.len()) {
                    self.buffer[..size].fill(0);
                    std::hint::black_box(&mut self.buffer);
                }
            }
            Event::Iorun { bytes } => {
                if let Some(mut device) = self.run.io_device.as_ref() {
                    for size in chunks(*bytes, self.buffer.len()) {
                        if let Err(e) = device.write_all(&self.buffer[..size]) {
                            self.record
                                .failure
                                .get_or_insert_with(|| format!("iorun: {IO_DEVICE}: {e}"));
                            break;
                        }
                    }
                }
            }
            Event::Yield => std::thread::yield_now(),
        }
        true
    }

    /// A timer event of phase `phase` begun at `began_ns`, as rt-app's
    /// (see [`timer`]).
    fn timer(
        &mut self,
        name: &str,
        period_ns: u64,
        mode: TimerMode,
        began_ns: u64,
        phase: usize,
    ) -> bool {
        let activation = match self.run.resources.timer(name) {
            Some(grid) => grid.lock().unwrap_or_else(|p| p.into_inner()).begin(
                self.origin_ns,
                began_ns,
                period_ns,
                mode,
            ),
            None => match self.own_timers.iter_mut().find(|(n, _)| *n == name) {
                Some((_, grid)) => grid.begin(self.origin_ns, began_ns, period_ns, mode),
                None => return true,
            },
        };
        let split = self.record.timer_began(began_ns, activation.expiry_ns);
        if let (Some(split), Some(sink)) = (split, &self.run.sink) {
            sink.event(self.record.task, self.tid, &split);
        }
        let woke_ns = match activation.sleeps() {
            true if activation.expiry_ns >= self.run.deadline.ns() => return false,
            true => {
                sleep_until_ns(activation.expiry_ns);
                self.record.woke()
            }
            false => self.record.woke(),
        };
        let times = ActivationTimes {
            began_ns,
            expiry_ns: activation.expiry_ns,
            slack_ns: activation.slack_ns,
            wakeup_ns: activation.wakeup_ns(woke_ns),
            run_ns: self.phase_run_ns[phase],
            period_ns,
        };
        self.record.activation(phase, times);
        true
    }

    /// Starts a thread of task `name`, when a record is left for it.
    fn fork(&self, name: &str) {
        let Some(index) = self.run.workload.tasks.iter().position(|t| t.name == name) else {
            return;
        };
        let record = {
            let mut spare = self
                .run
                .fork_records
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let at = spare.iter().position(|r| r.task == index);
            at.map(|at| spare.swap_remove(at))
        };
        if let Some(record) = record {
            let handle = spawn(&self.owner, record);
            self.run
                .forked
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(handle);
        }
    }
}

/// `bytes` in pieces of at most `buffer` bytes, as rt-app's `memload` and
/// `ioload` go through their buffer (none when the buffer is empty).
fn chunks(bytes: u64, buffer: usize) -> impl Iterator<Item = usize> {
    let buffer = buffer as u64;
    let whole = bytes.checked_div(buffer).unwrap_or(0);
    let rest = bytes.checked_rem(buffer).unwrap_or(0);
    (0..whole)
        .map(move |_| buffer as usize)
        .chain((rest > 0).then_some(rest as usize))
}

/// The CPU-bound part of one loop of `phase` (`run` and `runtime`), in ns.
fn phase_run_ns(phase: &Phase) -> u64 {
    phase
        .events
        .iter()
        .map(|e| match e {
            Event::Run { us } | Event::Runtime { us } => us * 1000,
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rt-app's memload: a buffer's worth at a time, then the rest.
    #[test]
    fn mem_and_iorun_go_through_the_buffer_in_pieces() {
        assert_eq!(chunks(10, 4).collect::<Vec<_>>(), [4, 4, 2]);
        assert_eq!(chunks(8, 4).collect::<Vec<_>>(), [4, 4]);
        assert_eq!(chunks(3, 0).count(), 0);
        assert_eq!(chunks(0, 4).count(), 0);
    }

    /// Two threads meeting at a barrier, the first on a 10 ms timer, run
    /// for 300 ms from 50 ms on (room for a loaded machine to start both
    /// before the window): both record, neither outlives the window.
    #[test]
    fn threads_run_their_events_until_the_window_ends() {
        let task = |name: &str, events: Vec<Event>| Task::looping(name, 1, events);
        let barrier = || Event::Barrier {
            name: "meet".to_string(),
        };
        let workload = Workload::of_tasks(vec![
            task(
                "ticking",
                vec![
                    Event::Run { us: 100 },
                    barrier(),
                    Event::Timer {
                        name: "unique".to_string(),
                        period_us: 10_000,
                        mode: TimerMode::Absolute,
                    },
                ],
            ),
            task("meeting", vec![barrier(), Event::Yield]),
        ]);
        let start_ns = now_ns() + 50_000_000;
        let window = Window {
            start_ns,
            end_ns: start_ns + 300_000_000,
        };
        let records = Executor::new(&workload, 1_000.0, false)
            .run(window)
            .unwrap();
        assert!(
            now_ns() < window.end_ns + 1_000_000_000,
            "ended near the window's end"
        );
        assert_eq!(records.len(), 2);
        let ticking = records.iter().find(|r| r.task == 0).unwrap();
        assert!(
            (1..=31).contains(&ticking.phases[0].activations),
            "{}",
            ticking.phases[0].activations
        );
        let meeting = records.iter().find(|r| r.task == 1).unwrap();
        assert_eq!(meeting.phases[0].activations, 0, "no timer, no activation");
        let loops = |r: &ThreadRecord| r.phases[0].loops;
        assert!(loops(meeting) >= 1 && loops(meeting) <= loops(ticking) + 1);
    }

    /// Splits handed to a sink: the task and thread of each.
    #[derive(Default)]
    struct Collected(Mutex<Vec<(usize, i32, EventSplit)>>);

    impl EventSink for Collected {
        fn event(&self, task: usize, tid: i32, split: &EventSplit) {
            self.0.lock().unwrap().push((task, tid, *split));
        }
    }

    /// A 5 ms timer task and one suspended for good, started with no end
    /// in sight: the timer's activations reach the sink, split, and a stop
    /// ends both threads at once (the suspended one's wait too).
    #[test]
    fn a_sink_gets_each_split_and_a_stop_ends_every_thread() {
        let workload = Workload::of_tasks(vec![
            Task::looping(
                "ticking",
                1,
                vec![
                    Event::Run { us: 100 },
                    Event::Timer {
                        name: "unique".to_string(),
                        period_us: 5_000,
                        mode: TimerMode::Absolute,
                    },
                ],
            ),
            Task::looping(
                "asleep",
                1,
                vec![Event::Suspend {
                    name: "never".to_string(),
                }],
            ),
        ]);
        let sink = Arc::new(Collected::default());
        let start_ns = now_ns();
        let running = Executor::new(&workload, 1_000.0, true)
            .with_sink(sink.clone())
            .start(Window {
                start_ns,
                end_ns: u64::MAX / 2,
            })
            .unwrap();
        while sink.0.lock().unwrap().len() < 3 {
            assert!(now_ns() < start_ns + 10_000_000_000, "no splits in 10 s");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stopping_ns = now_ns();
        running.stop();
        assert!(now_ns() - stopping_ns < 1_000_000_000, "stopped at once");
        let splits = sink.0.lock().unwrap();
        assert!(splits.iter().all(|(task, tid, split)| {
            *task == 0 && *tid > 0 && split.ended_ns >= split.woke_ns && split.woke_ns > 0
        }));
        assert_eq!(splits[0].2.cpu_wanted_ns, Some(100_000));
    }
}
