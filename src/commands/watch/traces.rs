//! `--trace DIR`: a Perfetto trace of each incident among the `--keep`
//! worst, rendered as `run --trace` renders a scenario (`crate::trace`):
//! the second before the late event to just after it, the event a slice
//! named by its cause with its parts, beside the time it was allowed (its
//! work and its threshold); with the flight recorder (root) every task's
//! `sched_switch`/`sched_wakeup` of that time by name and a flow from the
//! event to what ran instead; the telemetry's pressure and steal as
//! counters. Each file is named by the event's time and canary, written
//! beside and renamed, and removed when a worse incident pushes its own
//! out of the worst kept, so the directory never holds more than `--keep`
//! of them. A write that fails (a full disk) is said once; the watch goes
//! on.

use super::incident::Incident;
use crate::exit::UsageError;
use crate::figures::late::{LateEvent, RanInstead};
use crate::measure::late::{LoggedEvent, ThreadEvents};
use crate::measure::tasks::TaskSched;
use crate::measure::window::Window;
use crate::system::atomic::remove_dead_temporaries;
use crate::system::sched_trace::Trace as SchedRecords;
use crate::system::telemetry::window::{WindowSample, WindowSamples};
use crate::trace::ScenarioTrace;
use std::path::{Path, PathBuf};

/// How much of the time before the event's due time a trace shows: the
/// flight recorder's records reach this far back from it.
pub const BEFORE_NS: u64 = 1_000_000_000;
/// How much of the time after the event's end a trace shows (the recorder
/// has read it by the time the incident is made).
pub const AFTER_NS: u64 = 100_000_000;

/// The directory the traces go into, and whether a failed write was said.
pub struct IncidentTraces {
    dir: PathBuf,
    warned: bool,
}

impl IncidentTraces {
    /// The traces' directory `dir`, checked writable now: bad input if not.
    /// A trace a killed watch was writing there is removed, and said.
    pub fn open(dir: &Path) -> Result<Self, UsageError> {
        crate::trace::check_dir_writable(dir).map_err(UsageError::input)?;
        for path in remove_dead_temporaries(dir, |name| name.ends_with(".pftrace")) {
            say!(
                "watch: removed {}, a trace a killed watch was writing",
                path.display()
            );
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            warned: false,
        })
    }

    /// Writes `scenario`, the trace of `incident`, into the directory; its
    /// path, or `None` when it could not be written (said the first time).
    pub fn write(&mut self, incident: &Incident, scenario: &ScenarioTrace) -> Option<String> {
        let path = self.free_path(incident);
        match crate::trace::write(&path, &crate::trace::render(std::slice::from_ref(scenario))) {
            Ok(()) => Some(path.display().to_string()),
            Err(error) => {
                if !std::mem::replace(&mut self.warned, true) {
                    say!("watch: {error}; the watch goes on (a later trace that cannot be written is not said)");
                }
                None
            }
        }
    }

    /// Removes the trace of `incident`, pushed out of the worst kept.
    pub fn remove(&self, incident: &Incident) {
        if let Some(path) = &incident.trace {
            let _ = std::fs::remove_file(path);
        }
    }

    /// `TIME-CANARY.pftrace` in the directory (`-2`, `-3`, ... before the
    /// extension when the name is taken, by another watch's trace too).
    fn free_path(&self, incident: &Incident) -> PathBuf {
        let stem = format!("{}-{}", incident.at.replace(':', ""), incident.canary);
        (1..)
            .map(|n| match n {
                1 => self.dir.join(format!("{stem}.pftrace")),
                n => self.dir.join(format!("{stem}-{n}.pftrace")),
            })
            .find(|path| !path.exists())
            .unwrap_or_default()
    }
}

/// What the trace of `incident` shows: its canary's thread `tid` (as read
/// while it runs: `task`) with its one late event, allowed its CPU work
/// and its threshold, the tasks that ran instead, the recorder's `records`
/// of its time and the telemetry `samples` around it.
pub fn scenario(
    incident: &Incident,
    tid: u32,
    task: Option<TaskSched>,
    records: Option<SchedRecords>,
    samples: Vec<WindowSample>,
) -> ScenarioTrace {
    let split = &incident.split;
    let allowed_ns = split.due_ns
        + split.cpu_wanted_ns.unwrap_or(0)
        + (incident.threshold_ms * 1e6).round() as u64;
    let window = Window {
        start_ns: split.due_ns.saturating_sub(BEFORE_NS),
        end_ns: split.ended_ns + AFTER_NS,
    };
    let mut late = LateEvent::of(split);
    late.ran_instead = incident
        .ran_instead
        .iter()
        .map(|c| RanInstead {
            task: c.thread.clone(),
            pid: c.pid,
            tid: c.tid,
            ns: (c.ran_ms * 1e6).round() as u64,
        })
        .collect();
    ScenarioTrace {
        name: format!(
            "{} {:.1} ms late (threshold {:.1} ms) at {}",
            incident.canary, incident.latency_ms, incident.threshold_ms, incident.at
        ),
        probe: format!("canary {}", incident.canary),
        window,
        probe_tasks: task.into_iter().collect(),
        threads: vec![ThreadEvents {
            tid,
            events: vec![LoggedEvent::of(split, true, false, Some(allowed_ns))],
            lost: 0,
        }],
        worst: vec![late],
        load_tasks: Vec::new(),
        load_work: Vec::new(),
        samples: Some(WindowSamples {
            every_ns: 0,
            groups: Vec::new(),
            samples,
            cpu_ns: 0,
            errors: Vec::new(),
        }),
        sched: records,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::watch::incident::Culprit;
    use crate::measure::late::{Cause, EventSplit, Parts};

    const MS: u64 = 1_000_000;

    fn incident() -> Incident {
        let split = EventSplit {
            due_ns: 5_000 * MS,
            woke_ns: 5_030 * MS,
            ended_ns: 5_031 * MS,
            cpu_wanted_ns: Some(MS),
            parts: Parts {
                run_queue_wake_ns: 30 * MS,
                ..Parts::default()
            },
            ..EventSplit::default()
        };
        Incident {
            canary: "frame".into(),
            at: "2026-11-29T06:44:31.123Z".into(),
            latency_ms: 30.0,
            threshold_ms: 8.0,
            cause: Cause::RunQueue,
            split,
            recorded: true,
            ran_instead: vec![Culprit {
                thread: "stall".into(),
                tid: 9,
                pid: Some(9),
                process: None,
                cgroup: None,
                unit: None,
                ran_ms: 29.5,
            }],
            context: None,
            trace: None,
        }
    }

    #[test]
    fn an_incident_is_its_canarys_late_event_allowed_its_work_and_threshold() {
        let trace = scenario(&incident(), 7, None, None, Vec::new());
        assert_eq!(trace.window.start_ns, 4_000 * MS);
        assert_eq!(trace.window.end_ns, 5_131 * MS);
        let event = trace.threads[0].events[0];
        assert!(event.late && !event.dropped);
        assert_eq!(event.cause, Cause::RunQueue);
        assert_eq!(event.allowed_ns, Some(5_009 * MS));
        assert_eq!(trace.threads[0].tid, 7);
        let ran = &trace.worst[0].ran_instead[0];
        assert_eq!((ran.tid, ran.ns), (9, 29_500_000));
    }

    #[test]
    fn traces_are_named_by_time_and_canary_never_over_another_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A trace a killed watch (a pid past any pid_max) was writing.
        let killed = dir.path().join(format!(".x-timer.pftrace.{}.tmp", 1 << 23));
        std::fs::write(&killed, "").unwrap();
        let mut traces = IncidentTraces::open(dir.path()).unwrap();
        assert!(!killed.exists(), "open removes what a killed watch left");
        let mut first = incident();
        let scenario = scenario(&first, 7, None, None, Vec::new());
        first.trace = traces.write(&first, &scenario);
        let second = traces.write(&first, &scenario).unwrap();
        let name = |path: &str| Path::new(path).file_name().unwrap().to_owned();
        assert_eq!(
            name(first.trace.as_deref().unwrap()),
            "2026-11-29T064431.123Z-frame.pftrace"
        );
        assert_eq!(name(&second), "2026-11-29T064431.123Z-frame-2.pftrace");
        traces.remove(&first);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [name(&second)]);
        // A directory gone later: no trace, said once, no panic.
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let mut traces = IncidentTraces::open(&gone).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        assert_eq!(traces.write(&first, &scenario), None);
        assert!(traces.warned);
        assert!(IncidentTraces::open(&gone).is_err());
    }
}
