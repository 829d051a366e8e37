//! An incident: a canary event later than its threshold, kept with its
//! split, the tasks that ran on its CPU instead (from the flight
//! recorder's last seconds, `figures::explain::ran_instead`), each with its
//! process, thread and cgroup as a user knows them, and the machine's
//! steal, IRQ, pressure and reclaim around it (`figures::late_context`),
//! and its Perfetto trace's file when `--trace` wrote one.

use crate::figures::explain::Waits;
use crate::figures::late_context::{of_span, InferredContext};
use crate::measure::late::{Cause, EventSplit};
use crate::system::cgroup::unit;
use crate::system::procfs::process_of_thread;
use crate::system::telemetry::window::WindowSample;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Tasks named per incident, at most.
const CULPRITS_KEPT: usize = 5;

/// A task that ran on the canary's CPU while its event waited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    /// The thread's command name, its id.
    pub thread: String,
    pub tid: i32,
    /// Its process, and that process's command name, while it lived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// Its cgroup's path, and the unit or container a user knows it as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// How long it ran while the event waited, ms.
    pub ran_ms: f64,
}

/// A canary event later than its threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    pub canary: String,
    /// When it was due, in UTC (RFC 3339).
    pub at: String,
    /// Its delay (the split's parts added up) and the threshold, ms.
    pub latency_ms: f64,
    pub threshold_ms: f64,
    /// The part that holds at least half its delay.
    pub cause: Cause,
    pub split: EventSplit,
    /// Whether the flight recorder covered it; without, `ran_instead` is
    /// empty for want of a record, not of culprits.
    pub recorded: bool,
    /// The tasks that ran instead, most time first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ran_instead: Vec<Culprit>,
    /// The machine around it, inferred from samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<InferredContext>,
    /// Its Perfetto trace (`--trace`), there while it is among the worst
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// What an incident is made from, besides the event.
pub struct Evidence<'a> {
    /// The canary's waits in the recorder's records around the event, if
    /// it runs.
    pub waits: Option<&'a Waits<'a>>,
    /// The telemetry samples around it.
    pub samples: &'a [WindowSample],
    pub proc_root: &'a Path,
}

impl Incident {
    /// The incident of `split`, an event of canary `canary` later than
    /// `threshold_ns`, with what `evidence` says.
    pub fn of(canary: &str, threshold_ns: u64, split: &EventSplit, evidence: &Evidence) -> Self {
        let ran = evidence
            .waits
            .and_then(|waits| waits.ran_instead(split, &HashMap::new()))
            .unwrap_or_default();
        let mut cpus = vec![split.woke_cpu as usize, split.ended_cpu as usize];
        cpus.dedup();
        Self {
            canary: canary.to_string(),
            at: wall_clock(split.due_ns),
            latency_ms: ms(split.delay_ns()),
            threshold_ms: ms(threshold_ns),
            cause: split.cause(),
            split: *split,
            recorded: evidence.waits.is_some_and(|w| w.trace().stopped.is_none()),
            ran_instead: ran
                .iter()
                .take(CULPRITS_KEPT)
                .map(|r| culprit(evidence.proc_root, &r.task, r.tid, r.ns))
                .collect(),
            context: of_span(evidence.samples, split.due_ns, split.ended_ns, &cpus),
            trace: None,
        }
    }

    /// One line: when, which canary, how late, why, who ran instead and
    /// what the machine went through.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} {} {:.1} ms late (threshold {:.1} ms) on CPU {}: {}",
            self.at,
            self.canary,
            self.latency_ms,
            self.threshold_ms,
            self.split.woke_cpu,
            self.cause.words()
        );
        let ran: Vec<String> = self
            .ran_instead
            .iter()
            .map(|c| {
                let task = match (&c.process, c.pid) {
                    (Some(name), Some(pid)) if name != &c.thread => {
                        format!("{name}[{pid}] thread {}", c.thread)
                    }
                    (_, Some(pid)) => format!("{}[{pid}]", c.thread),
                    _ => format!("{} (tid {})", c.thread, c.tid),
                };
                let unit = c
                    .unit
                    .as_deref()
                    .map_or(String::new(), |u| format!(" ({u})"));
                format!("{task}{unit} {:.1} ms", c.ran_ms)
            })
            .collect();
        match (self.recorded, ran.is_empty()) {
            (true, false) => line.push_str(&format!("; ran instead: {}", ran.join(", "))),
            (true, true) => line.push_str("; nothing else ran on its CPU"),
            (false, _) => {}
        }
        if let Some(context) = &self.context {
            line.push_str(&format!("; around it: {}", context.words()));
        }
        if let Some(trace) = &self.trace {
            line.push_str(&format!("; trace {trace}"));
        }
        line
    }
}

/// The task `tid` (command name `thread`) that ran `ns`, with its process
/// and cgroup read below `proc_root` while it lives.
fn culprit(proc_root: &Path, thread: &str, tid: i32, ns: u64) -> Culprit {
    let pid = process_of_thread(proc_root, tid);
    let group = pid.and_then(|pid| unit::of_process(proc_root, pid));
    Culprit {
        thread: thread.to_string(),
        tid,
        pid,
        process: pid.and_then(|pid| {
            std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
                .ok()
                .map(|c| c.trim_end().to_string())
        }),
        cgroup: group.as_ref().map(|g| g.path.clone()),
        unit: group.map(|g| g.name),
        ran_ms: ms(ns),
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The UTC time of the `CLOCK_MONOTONIC` time `at_ns`, to the millisecond.
fn wall_clock(at_ns: u64) -> String {
    let ago = crate::measure::clock::now_ns().saturating_sub(at_ns);
    let time = SystemTime::now() - Duration::from_nanos(ago);
    humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::late::Parts;

    fn late_event() -> EventSplit {
        EventSplit {
            due_ns: 1_000_000,
            woke_ns: 31_000_000,
            ended_ns: 31_000_000,
            parts: Parts {
                run_queue_wake_ns: 30_000_000,
                ..Parts::default()
            },
            ..EventSplit::default()
        }
    }

    #[test]
    fn a_process_and_its_cgroup_are_read_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        for (pid, status, comm) in [(7, "Tgid:\t7\n", "stall\n"), (8, "Tgid:\t7\n", "")] {
            let d = dir.path().join(pid.to_string());
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("status"), format!("Name:\tx\n{status}")).unwrap();
            std::fs::write(d.join("comm"), comm).unwrap();
            std::fs::write(d.join("cgroup"), "0::/system.slice/stall.service\n").unwrap();
        }
        let c = culprit(dir.path(), "stall-worker", 8, 30_000_000);
        assert_eq!(c.pid, Some(7));
        assert_eq!(c.process.as_deref(), Some("stall"));
        assert_eq!(c.unit.as_deref(), Some("stall.service"));
        assert_eq!(c.ran_ms, 30.0);
        let gone = culprit(dir.path(), "gone", 99, 1);
        assert_eq!((gone.pid, gone.unit), (None, None));
    }

    #[test]
    fn an_incident_without_a_recorder_says_its_cause_and_names_no_one() {
        let evidence = Evidence {
            waits: None,
            samples: &[],
            proc_root: Path::new("/nonexistent"),
        };
        let incident = Incident::of("timer", 2_000_000, &late_event(), &evidence);
        assert_eq!(incident.cause, Cause::RunQueue);
        assert_eq!(incident.latency_ms, 30.0);
        assert!(!incident.recorded && incident.ran_instead.is_empty());
        let line = incident.line();
        assert!(
            line.contains("timer 30.0 ms late (threshold 2.0 ms)"),
            "{line}"
        );
        assert!(!line.contains("ran instead"), "{line}");
    }
}
