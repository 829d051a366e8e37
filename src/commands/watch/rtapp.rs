//! rt-app canaries (`--canary rtapp:SPEC`, a file or a shipped workload):
//! each task of the workload that waits on a timer is a canary named
//! `rtapp:SPEC/TASK`, its events the work after each activation, split as
//! the `rtapp` probe splits it (due at the timer's expiry; late, for the
//! late account, when the next activation began after its expiry; the
//! workload's own sleeps and waits for its other threads taken out). The
//! workload runs on the probe's executor (`sim::rtapp::exec`) for as long
//! as the watch, its own `duration` left to `-t`, and stops with it.

use super::canary::{self, CanaryEvent, CanarySetting, CanaryWork};
use crate::exit::UsageError;
use crate::measure::affinity;
use crate::measure::clock::now_ns;
use crate::measure::late::EventSplit;
use crate::measure::window::Window;
use crate::sim::rtapp::exec::{EventSink, Executor, Running};
use crate::sim::rtapp::model::Workload;
use crate::sim::rtapp::parse;
use crate::system::cpulist::CpuList;
use anyhow::Context as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

/// How `--canary` names an rt-app workload.
pub const PREFIX: &str = "rtapp:";

/// The canaries of `rtapp:SPEC`, one per task with a timer, each with its
/// default threshold: half its shortest timer period, at least 1 ms.
pub fn settings(spec: &str) -> Result<Vec<CanarySetting>, UsageError> {
    let bad = |e: &dyn std::fmt::Display| UsageError::new(format!("--canary {PREFIX}{spec}: {e}"));
    let workload = parse::load(spec, false).map_err(|e| bad(&e))?;
    for warning in workload.warnings() {
        say!("warning: {warning}");
    }
    if let Some(why) = workload.probe_problem() {
        return Err(bad(&why));
    }
    let workload = Arc::new(Workload {
        duration_s: None,
        ..workload
    });
    Ok(workload
        .tasks
        .iter()
        .enumerate()
        .filter_map(|(task, t)| {
            let period_ns = t.shortest_timer_period_ns()?;
            Some(CanarySetting {
                name: format!("{PREFIX}{spec}/{}", t.name),
                period_ns,
                threshold_ns: canary::default_threshold_ns(period_ns),
                work: CanaryWork::Rtapp {
                    workload: workload.clone(),
                    task,
                },
            })
        })
        .collect())
}

/// One workload's canaries, running.
pub struct RtappCanaries {
    running: Running,
    sink: Arc<Sink>,
    /// The workload's `rtapp:SPEC` and its tasks' names, to say what its
    /// threads could not do.
    spec: String,
    tasks: Vec<String>,
}

/// Hands each watched task's splits to the watch, counting those a full
/// queue drops.
struct Sink {
    /// The canary of each task of the workload, if it is one.
    canary_of_task: Vec<Option<usize>>,
    /// Events dropped, per task.
    dropped: Vec<AtomicU64>,
    events: SyncSender<CanaryEvent>,
}

impl EventSink for Sink {
    fn event(&self, task: usize, tid: i32, split: &EventSplit) {
        let Some(canary) = self.canary_of_task[task] else {
            return;
        };
        let event = CanaryEvent {
            canary,
            tid,
            split: *split,
        };
        canary::hand_over(&self.events, event, &self.dropped[task]);
    }
}

impl RtappCanaries {
    /// Starts every task of `workload`, its tasks `(task, canary)` handing
    /// their events to `events` as that canary, on `cpus` if given (the
    /// threads inherit them from the one that starts them; a phase that
    /// sets its own CPUs sets them).
    pub fn start(
        workload: &Workload,
        tasks: &[(usize, usize)],
        loops_per_ms: f64,
        cpus: Option<&CpuList>,
        events: &SyncSender<CanaryEvent>,
    ) -> anyhow::Result<Self> {
        let mut canary_of_task = vec![None; workload.tasks.len()];
        for &(task, canary) in tasks {
            canary_of_task[task] = Some(canary);
        }
        let sink = Arc::new(Sink {
            dropped: canary_of_task.iter().map(|_| AtomicU64::new(0)).collect(),
            canary_of_task,
            events: events.clone(),
        });
        let executor = Executor::new(workload, loops_per_ms, true).with_sink(sink.clone());
        let cpus = cpus.cloned();
        let starter = std::thread::Builder::new()
            .name("fb-canary-rtapp".to_string())
            .spawn(move || {
                if let Some(cpus) = &cpus {
                    if let Err(e) = affinity::set(cpus) {
                        say!("watch: the rt-app canaries stay unpinned: {e}");
                    }
                }
                let start_ns = now_ns();
                executor.start(Window {
                    start_ns,
                    end_ns: u64::MAX / 2,
                })
            })
            .context("starting the rt-app canaries")?;
        let running = starter
            .join()
            .map_err(|_| anyhow::anyhow!("the rt-app canaries' starter panicked"))?
            .context("starting the rt-app canaries")?;
        Ok(Self {
            running,
            sink,
            spec: workload.source.clone(),
            tasks: workload.tasks.iter().map(|t| t.name.clone()).collect(),
        })
    }

    /// Events canary number `canary` could not hand over so far (0 when
    /// it is not one of these).
    pub fn dropped(&self, canary: usize) -> u64 {
        let sink = &self.sink;
        sink.canary_of_task
            .iter()
            .zip(&sink.dropped)
            .filter(|(c, _)| **c == Some(canary))
            .map(|(_, n)| n.load(Ordering::Relaxed))
            .sum()
    }

    /// Stops the workload's threads and waits for them; says, once per
    /// task, the first thing its threads could not do as the file asked (a
    /// scheduling setting refused).
    pub fn stop(self) {
        let mut said: Vec<usize> = Vec::new();
        for record in self.running.stop() {
            let Some(failure) = record.failure else {
                continue;
            };
            if !said.contains(&record.task) {
                say!(
                    "watch: {PREFIX}{}, task {}: {failure}",
                    self.spec,
                    self.tasks[record.task]
                );
                said.push(record.task);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_workload_gives_a_canary_per_task_with_a_timer() {
        let set = settings("audio-chain").unwrap();
        let names: Vec<&str> = set.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["rtapp:audio-chain/driver"],
            "synth and mixer wait on no timer"
        );
        assert_eq!(set[0].period_ns, 5_333_000);
        assert_eq!(set[0].threshold_ns, 2_666_500);
        let CanaryWork::Rtapp { workload, task } = &set[0].work else {
            panic!("not an rt-app canary");
        };
        assert_eq!((workload.tasks.len(), *task), (3, 0));
        assert_eq!(workload.duration_s, None, "the watch's -t decides");
        let tab = settings("browser-tab").unwrap();
        assert_eq!(tab[0].name, "rtapp:browser-tab/tab");
        assert_eq!(tab[0].threshold_ns, 8_333_500);
    }

    #[test]
    fn bad_workloads_are_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let untimed = dir.path().join("untimed.json");
        std::fs::write(
            &untimed,
            r#"{ "tasks": { "t": { "loop": -1, "run": 100, "sleep": 1000 } } }"#,
        )
        .unwrap();
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{ \"tasks\": ").unwrap();
        let specs = [
            "no-such-workload".to_string(),
            untimed.display().to_string(),
            broken.display().to_string(),
        ];
        for spec in specs {
            let e = settings(&spec).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--canary rtapp:{spec}: ")), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
