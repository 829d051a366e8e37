//! An rt-app workload as feelbench understands it: tasks, their phases and
//! the events of each phase, in order, with every unit in microseconds as
//! rt-app writes them. Built by the parser (`parse`) from rt-app's JSON;
//! run by the executor (`exec`); sent to workers inside `WorkParams`.

use serde::{Deserialize, Serialize};

/// A whole rt-app file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Where it came from: a shipped workload's name or the file's path.
    pub source: String,
    /// The SHA-256 of the file's text (so runs of different files never
    /// compare as the same settings).
    pub sha256: String,
    /// `global.duration` in seconds; `None` for -1 (until the tasks end;
    /// feelbench's `-t` bounds it anyway).
    pub duration_s: Option<f64>,
    /// `global.default_policy`.
    pub default_policy: Policy,
    /// `global.mem_buffer_size`: the buffer each thread with a `mem` or
    /// `iorun` goes through, in bytes (rt-app's default 4 MiB).
    #[serde(default = "default_mem_buffer_bytes")]
    pub mem_buffer_bytes: u64,
    /// The tasks, in the file's order.
    pub tasks: Vec<Task>,
    /// Keys rt-app's own parser would also ignore or that feelbench accepts
    /// and records without acting on (`logdir`, `ftrace`, ...), with where
    /// they were.
    pub ignored: Vec<Ignored>,
}

impl Workload {
    /// A warning per key rt-app ignores (a misspelt key, a task key in a
    /// phase), with the file and line: feelbench went on without it.
    pub fn warnings(&self) -> Vec<String> {
        self.ignored
            .iter()
            .filter_map(|i| {
                let why = i.unknown.as_ref()?;
                Some(format!(
                    "{}:{}: {}: {}: {why}; left out, as rt-app does (--rtapp-strict refuses the file)",
                    self.source, i.line, i.place, i.key
                ))
            })
            .collect()
    }
}

/// rt-app's default `mem_buffer_size`, in bytes.
pub const MEM_BUFFER_BYTES: u64 = 4 << 20;

fn default_mem_buffer_bytes() -> u64 {
    MEM_BUFFER_BYTES
}

/// A key that was read and left alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ignored {
    /// The key as written.
    pub key: String,
    /// `global`, `task NAME`, `task NAME phase NAME`.
    pub place: String,
    /// 1-based line in the file.
    pub line: usize,
    /// Why rt-app ignores it, for a key it does not know (`None`: a key
    /// feelbench records without acting on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

/// One task: `instance` threads running the same phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub name: String,
    /// Threads started at once; 0 = only started by a `fork` event.
    pub instances: u32,
    /// Microseconds to wait before the first phase.
    pub delay_us: u64,
    /// Times the whole list of phases runs; `None` = until stopped.
    pub loops: Option<u64>,
    /// The task's own scheduling (the default for its phases).
    pub sched: Sched,
    pub phases: Vec<Phase>,
}

/// One phase: its events, `loops` times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Its key in `phases` (`"p1"`), or `"main"` for a task without phases.
    pub name: String,
    /// Times its events run each time the phase is entered (at least 1).
    pub loops: u64,
    /// Scheduling for this phase; unset fields fall back to the task's
    /// (and `cpus` to the task's set, as rt-app does).
    pub sched: Sched,
    pub events: Vec<Event>,
}

/// Scheduling settings of a task or phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sched {
    pub policy: Option<Policy>,
    /// The nice value for SCHED_OTHER/BATCH/IDLE, the real-time priority
    /// for SCHED_FIFO/RR.
    pub priority: Option<i32>,
    /// CPUs the thread may run on.
    pub cpus: Option<Vec<usize>>,
}

/// A scheduling class rt-app names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
// The names are rt-app's (and the kernel's) SCHED_* names.
#[allow(clippy::enum_variant_names)]
pub enum Policy {
    SchedOther,
    SchedBatch,
    SchedIdle,
    SchedFifo,
    SchedRr,
}

/// How a timer's next expiry is found after its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerMode {
    /// On the grid of the first expiry: a late activation is followed by
    /// ones that are late too until the grid is caught up.
    Absolute,
    /// From the time the event ran: lateness is forgiven.
    Relative,
}

/// One event of a phase, in rt-app's meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Calibrated CPU work worth this many microseconds on the calibrated
    /// machine (rt-app's `run`: loops, not time).
    Run {
        us: u64,
    },
    /// CPU work until this many microseconds of wall-clock time passed.
    Runtime {
        us: u64,
    },
    Sleep {
        us: u64,
    },
    /// Waits for the timer `name`'s next expiry; one timer for every
    /// thread that names it, except names starting with `unique`, which
    /// are per thread.
    Timer {
        name: String,
        period_us: u64,
        mode: TimerMode,
    },
    /// Waits until every thread that uses barrier `name` reached it.
    Barrier {
        name: String,
    },
    /// Waits until another thread resumes this one (`name`: rt-app's
    /// reference; the task's own name when none is given).
    Suspend {
        name: String,
    },
    /// Wakes the thread(s) suspended on `name`.
    Resume {
        name: String,
    },
    Lock {
        mutex: String,
    },
    Unlock {
        mutex: String,
    },
    /// Waits on condition `cond` with `mutex` held.
    Wait {
        cond: String,
        mutex: String,
    },
    /// Wakes one waiter of `cond`.
    Signal {
        cond: String,
    },
    /// Wakes every waiter of `cond`.
    Broad {
        cond: String,
    },
    /// Signals `cond` and waits on it (rt-app's `sync`).
    Sync {
        cond: String,
        mutex: String,
    },
    /// Starts a thread of the task `task` (one whose `instance` is 0).
    Fork {
        task: String,
    },
    /// Writes this many bytes to the thread's memory buffer, a buffer's
    /// worth at a time (rt-app's `memset`).
    Mem {
        bytes: u64,
    },
    /// Writes this many bytes from the thread's buffer to the null device
    /// (rt-app's default `io_device`), a buffer's worth at a time.
    Iorun {
        bytes: u64,
    },
    Yield,
}

impl Workload {
    /// Whether any task writes with `iorun`.
    pub fn has_iorun(&self) -> bool {
        self.tasks
            .iter()
            .flat_map(|t| &t.phases)
            .flat_map(|p| &p.events)
            .any(|e| matches!(e, Event::Iorun { .. }))
    }

    /// Whether any task waits on a timer: only then is there something to
    /// be late for, and a probe measures it.
    pub fn has_timer(&self) -> bool {
        self.tasks.iter().any(Task::has_timer)
    }

    /// Why this workload cannot be measured as a probe (it can still run
    /// as a load): no timer to be late for, or a task that loops forever
    /// without ever waiting (no timer, sleep, suspend, wait or sync) and
    /// would spin on a CPU for the whole run. `None` when it can.
    pub fn probe_problem(&self) -> Option<String> {
        if !self.has_timer() {
            return Some(format!(
                "{}: no task waits on a timer, so nothing can be late (a probe measures wake-ups at timers; run it as a load)",
                self.source
            ));
        }
        let spinner = self
            .tasks
            .iter()
            .find(|t| t.loops.is_none() && !t.waits())?;
        Some(format!(
            "{}: task {} loops forever without a timer, sleep, suspend, wait or sync: it would spin on a CPU for the whole run (run it as a load)",
            self.source, spinner.name
        ))
    }
}

impl Task {
    /// Whether any of its events waits on a timer.
    pub fn has_timer(&self) -> bool {
        self.shortest_timer_period_ns().is_some()
    }

    /// The shortest period of the timers it waits on, if it waits on one.
    pub fn shortest_timer_period_ns(&self) -> Option<u64> {
        self.phases
            .iter()
            .flat_map(|p| &p.events)
            .filter_map(|e| match e {
                Event::Timer { period_us, .. } => Some(period_us * 1000),
                _ => None,
            })
            .min()
    }

    /// Each phase's name, in order, made unique within the task (a name
    /// rt-app's file repeats gets `#N`, its place from 1).
    pub fn phase_names(&self) -> Vec<String> {
        let names: Vec<&str> = self.phases.iter().map(|p| p.name.as_str()).collect();
        names
            .iter()
            .enumerate()
            .map(
                |(index, name)| match names.iter().filter(|n| *n == name).count() {
                    1 => name.to_string(),
                    _ => format!("{name}#{}", index + 1),
                },
            )
            .collect()
    }

    /// Whether any of its events blocks the thread for a while.
    pub fn waits(&self) -> bool {
        self.phases.iter().flat_map(|p| &p.events).any(|e| {
            matches!(
                e,
                Event::Timer { .. }
                    | Event::Sleep { .. }
                    | Event::Suspend { .. }
                    | Event::Wait { .. }
                    | Event::Sync { .. }
            )
        })
    }
}

#[cfg(test)]
impl Task {
    /// A task of `instances` threads with one phase of `events`, looping
    /// until stopped (for tests).
    pub fn looping(name: &str, instances: u32, events: Vec<Event>) -> Self {
        Self {
            name: name.to_string(),
            instances,
            delay_us: 0,
            loops: None,
            sched: Sched::default(),
            phases: vec![Phase {
                name: "main".to_string(),
                loops: 1,
                sched: Sched::default(),
                events,
            }],
        }
    }
}

#[cfg(test)]
impl Workload {
    /// A workload of `tasks` under SCHED_OTHER (for tests).
    pub fn of_tasks(tasks: Vec<Task>) -> Self {
        Self {
            source: "test".to_string(),
            sha256: String::new(),
            duration_s: None,
            default_policy: Policy::SchedOther,
            mem_buffer_bytes: MEM_BUFFER_BYTES,
            tasks,
            ignored: Vec::new(),
        }
    }
}
