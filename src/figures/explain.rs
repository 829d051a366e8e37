//! `--explain`: which tasks ran while the probe waited for its CPU, from a
//! scheduler trace ([`Trace`]). Pure: the trace and the tasks' names in, the
//! late events' `ran_instead` and a per-scenario summary out.
//!
//! A wait of a probe thread is the time between the moment it became
//! runnable (its wake-up, or its preemption) and its switch-in; what ran on
//! that CPU meanwhile ran instead of it. A late event's waits are the one
//! that ended at its wake-up reading (counted from its due time at the
//! earliest) and those while it was preempted during its work.

use super::late::{LateCauses, RanInstead};
use crate::measure::late::EventSplit;
use crate::system::sched_trace::{Switch, Trace, Wakeup};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Tasks named in a summary, at most.
pub const TOP_TASKS: usize = 10;

/// What the run knows a task as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskName {
    /// feelbench's name (`burn#2`, `hack#1 fb-hack-recv 7`), or the
    /// foreign task's command name.
    pub name: String,
    /// Its process; `None` when it ended before it could be looked up.
    pub pid: Option<i32>,
}

/// Whether the recorder ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExplainStatus {
    /// For the whole window.
    Recorded,
    /// Turned off part-way (its cost, its records): waits after that are
    /// not attributed.
    Stopped,
    /// Not started (not root, no tracefs or perf events, a predicted cost
    /// above the budget).
    Off,
}

/// What the recorder cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ExplainCost {
    /// The machine's context switches per second before the scenario.
    pub switch_rate_per_s: Option<f64>,
    /// The kernel's time per record written, and ours to read one, ns.
    pub kernel_ns_per_record: f64,
    pub read_ns_per_record: f64,
    /// Predicted before the scenario, % of one CPU.
    pub predicted_cpu_pct: f64,
    /// Measured during it (records × the kernel's time + the reading
    /// thread's CPU time, over the time recorded), % of one CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_cpu_pct: Option<f64>,
    /// Records read, and records the kernel could not write.
    pub records: u64,
    pub lost: u64,
}

/// One probe thread's waits for a CPU that ended in the measurement
/// window (its whole wait: one that began before the window counts whole).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadWaits {
    pub tid: i32,
    pub name: String,
    /// Waits seen, and their time in all, ns.
    pub waits: u64,
    pub wait_ns: u64,
    /// The tasks that ran meanwhile, most time first, at most
    /// [`TOP_TASKS`].
    pub behind: Vec<RanInstead>,
}

/// The flight recorder's part of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainSummary {
    pub status: ExplainStatus,
    /// Why it is off or stopped, in one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// How it recorded.
    pub method: String,
    /// The CPUs recorded.
    pub cpus: Vec<u32>,
    /// The measurement window (`CLOCK_MONOTONIC`, ns), to cut an external
    /// tracer's output to it; `None` in merges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<[u64; 2]>,
    pub cost: ExplainCost,
    /// The probe's threads that waited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadWaits>,
}

impl ExplainSummary {
    /// A recorder that did not run, for `notice`.
    pub fn off(method: &str, notice: String, cost: ExplainCost) -> Self {
        Self {
            status: ExplainStatus::Off,
            notice: Some(notice),
            method: method.to_string(),
            cpus: Vec::new(),
            window_ns: None,
            cost,
            threads: Vec::new(),
        }
    }

    /// The merge of `all` (at least one): the worst status, costs at their
    /// highest, records added, each thread's waits added by name.
    pub fn merged(all: &[&ExplainSummary]) -> Self {
        let status = all
            .iter()
            .map(|s| s.status)
            .max_by_key(|s| *s as u8)
            .unwrap_or(ExplainStatus::Off);
        let mut threads: Vec<ThreadWaits> = Vec::new();
        for thread in all.iter().flat_map(|s| &s.threads) {
            match threads.iter_mut().find(|t| t.name == thread.name) {
                Some(known) => {
                    known.waits += thread.waits;
                    known.wait_ns += thread.wait_ns;
                    known.behind = add_by_task(known.behind.iter().chain(&thread.behind));
                }
                None => threads.push(thread.clone()),
            }
        }
        let max = |f: fn(&ExplainCost) -> f64| all.iter().map(|s| f(&s.cost)).fold(0.0, f64::max);
        Self {
            status,
            notice: all.iter().find_map(|s| s.notice.clone()),
            method: all[0].method.clone(),
            cpus: all[0].cpus.clone(),
            window_ns: None,
            cost: ExplainCost {
                switch_rate_per_s: all
                    .iter()
                    .filter_map(|s| s.cost.switch_rate_per_s)
                    .reduce(f64::max),
                kernel_ns_per_record: max(|c| c.kernel_ns_per_record),
                read_ns_per_record: max(|c| c.read_ns_per_record),
                predicted_cpu_pct: max(|c| c.predicted_cpu_pct),
                measured_cpu_pct: all
                    .iter()
                    .filter_map(|s| s.cost.measured_cpu_pct)
                    .reduce(f64::max),
                records: all.iter().map(|s| s.cost.records).sum(),
                lost: all.iter().map(|s| s.cost.lost).sum(),
            },
            threads,
        }
    }
}

/// Fills the `ran_instead` of `late`'s kept events from `trace`, and sets
/// its summary, with `summary` as the recorder left it; `probe_tids` are
/// the probe's threads, `names` what the run calls each task.
pub fn explain(
    late: &mut LateCauses,
    trace: &Trace,
    probe_tids: &[i32],
    names: &HashMap<i32, TaskName>,
    mut summary: ExplainSummary,
) {
    let waits = Waits::new(trace, probe_tids);
    for event in &mut late.worst {
        if let Some(ran) = waits.ran_instead(&event.split, names) {
            event.ran_instead = ran;
        }
    }
    let [from_ns, to_ns] = summary.window_ns.unwrap_or([trace.from_ns, trace.to_ns]);
    summary.threads = probe_tids
        .iter()
        .filter_map(|&tid| waits.of_thread(tid, (from_ns, to_ns), names))
        .collect();
    late.explain = Some(summary);
}

/// A probe's threads' switch-outs and -ins over a trace, found once, so
/// that each late event's waits ([`Waits::ran_instead`]) are found among
/// them rather than among every record.
pub struct Waits<'a> {
    trace: &'a Trace,
    probe_tids: &'a [i32],
    /// The switches from or to a probe thread, in time order.
    probe_switches: Vec<&'a Switch>,
    /// The wake-ups of a probe thread, in time order.
    probe_wakeups: Vec<&'a Wakeup>,
}

/// Time a task ran, ns, by tid.
type RanBy = Vec<(i32, u64)>;

impl<'a> Waits<'a> {
    /// The waits of the threads `probe_tids` in `trace`.
    pub fn new(trace: &'a Trace, probe_tids: &'a [i32]) -> Self {
        let mut probe_switches: Vec<&Switch> = trace
            .switches
            .iter()
            .filter(|s| probe_tids.contains(&s.prev_tid) || probe_tids.contains(&s.next_tid))
            .collect();
        probe_switches.sort_by_key(|s| s.at_ns);
        let mut probe_wakeups: Vec<&Wakeup> = trace
            .wakeups
            .iter()
            .filter(|w| probe_tids.contains(&w.tid))
            .collect();
        probe_wakeups.sort_by_key(|w| w.at_ns);
        Self {
            trace,
            probe_tids,
            probe_switches,
            probe_wakeups,
        }
    }

    /// The trace the waits are found in.
    pub fn trace(&self) -> &'a Trace {
        self.trace
    }

    /// The tasks that ran on its CPU while the event of `split` waited,
    /// most time first: every wait of its thread from its due time to its
    /// end (at its wake-up, while preempted, and, for an event due while
    /// the previous one still ran, that one's waits after the due time);
    /// `None` when the trace has no switch to a probe thread before its
    /// wake-up.
    pub fn ran_instead(
        &self,
        split: &EventSplit,
        names: &HashMap<i32, TaskName>,
    ) -> Option<Vec<RanInstead>> {
        let switch_in = self.switch_in_before(split.woke_cpu, split.woke_ns)?;
        let mut ran: RanBy = Vec::new();
        let tid = switch_in.next_tid;
        for back in self.switch_ins(tid, split.due_ns, split.ended_ns) {
            for (task, ns) in self.ran_before(back, split.due_ns) {
                add(&mut ran, task, ns);
            }
        }
        Some(named(&ran, self.trace, names, usize::MAX))
    }

    /// The switches on `cpu`, in time order.
    fn on(&self, cpu: u32) -> &'a [Switch] {
        let all = &self.trace.switches;
        let start = all.partition_point(|s| s.cpu < cpu);
        let end = all.partition_point(|s| s.cpu <= cpu);
        &all[start..end]
    }

    /// The last switch to a probe thread on `cpu` at or before `at_ns`.
    fn switch_in_before(&self, cpu: u32, at_ns: u64) -> Option<&'a Switch> {
        let on = self.on(cpu);
        on[..on.partition_point(|s| s.at_ns <= at_ns)]
            .iter()
            .rev()
            .find(|s| s.prev_tid != s.next_tid)
            .filter(|s| self.probe_tids.contains(&s.next_tid))
    }

    /// When the thread switched in by `switch_in` became runnable: its
    /// last wake-up or preemption before, and not before `from_ns`.
    fn runnable_since(&self, switch_in: &Switch, from_ns: u64) -> u64 {
        let tid = switch_in.next_tid;
        let woke = self
            .probe_wakeups
            .iter()
            .rev()
            .filter(|w| w.tid == tid && w.at_ns <= switch_in.at_ns)
            .map(|w| w.at_ns)
            .next();
        let preempted = self
            .probe_switches
            .iter()
            .filter(|s| s.prev_tid == tid && s.prev_runnable && s.at_ns <= switch_in.at_ns)
            .map(|s| s.at_ns)
            .max();
        woke.max(preempted).unwrap_or(switch_in.at_ns).max(from_ns)
    }

    /// What ran on the switch-in's CPU while its thread waited for it,
    /// counted from `from_ns` at the earliest.
    fn ran_before(&self, switch_in: &Switch, from_ns: u64) -> RanBy {
        let since = self.runnable_since(switch_in, from_ns);
        self.ran_on(switch_in.cpu, since, switch_in.at_ns, switch_in.next_tid)
    }

    /// What ran on `cpu` between `from_ns` and `to_ns`, idle and `waiting`
    /// left out.
    fn ran_on(&self, cpu: u32, from_ns: u64, to_ns: u64, waiting: i32) -> RanBy {
        let on = self.on(cpu);
        let first = on.partition_point(|s| s.at_ns <= from_ns).saturating_sub(1);
        let mut ran: RanBy = Vec::new();
        for (index, switch) in on.iter().enumerate().skip(first) {
            if switch.at_ns >= to_ns {
                break;
            }
            let end = on
                .get(index + 1)
                .map_or(to_ns, |next| next.at_ns.min(to_ns));
            let start = switch.at_ns.max(from_ns);
            if end > start && switch.next_tid != 0 && switch.next_tid != waiting {
                add(&mut ran, switch.next_tid, end - start);
            }
        }
        ran
    }

    /// The switches to `tid` after `from_ns` and up to `to_ns`: the ends
    /// of its waits in that time.
    fn switch_ins(
        &self,
        tid: i32,
        from_ns: u64,
        to_ns: u64,
    ) -> impl Iterator<Item = &'a Switch> + '_ {
        let all = &self.probe_switches;
        let (start, end) = (
            all.partition_point(|s| s.at_ns <= from_ns),
            all.partition_point(|s| s.at_ns <= to_ns),
        );
        all[start..end]
            .iter()
            .copied()
            .filter(move |s| s.next_tid == tid && s.prev_tid != tid)
    }

    /// Every wait of probe thread `tid` that ended in `window` (ns), with
    /// what ran meanwhile; `None` when it never waited.
    fn of_thread(
        &self,
        tid: i32,
        (from_ns, to_ns): (u64, u64),
        names: &HashMap<i32, TaskName>,
    ) -> Option<ThreadWaits> {
        let trace = self.trace;
        let (mut waits, mut wait_ns) = (0, 0);
        let mut ran: RanBy = Vec::new();
        let switch_ins = self
            .probe_switches
            .iter()
            .filter(|s| s.next_tid == tid && s.prev_tid != tid)
            .filter(|s| (from_ns..=to_ns).contains(&s.at_ns));
        for switch_in in switch_ins {
            let since = self.runnable_since(switch_in, trace.from_ns);
            if since >= switch_in.at_ns {
                continue;
            }
            waits += 1;
            wait_ns += switch_in.at_ns - since;
            for (task, ns) in self.ran_on(switch_in.cpu, since, switch_in.at_ns, tid) {
                add(&mut ran, task, ns);
            }
        }
        (waits > 0).then(|| ThreadWaits {
            tid,
            name: name_of(tid, trace, names).name,
            waits,
            wait_ns,
            behind: named(&ran, trace, names, TOP_TASKS),
        })
    }
}

fn add(ran: &mut RanBy, tid: i32, ns: u64) {
    match ran.iter_mut().find(|(t, _)| *t == tid) {
        Some((_, total)) => *total += ns,
        None => ran.push((tid, ns)),
    }
}

fn name_of(tid: i32, trace: &Trace, names: &HashMap<i32, TaskName>) -> TaskName {
    names.get(&tid).cloned().unwrap_or_else(|| TaskName {
        name: trace
            .comms
            .get(&tid)
            .cloned()
            .unwrap_or_else(|| format!("tid {tid}")),
        pid: None,
    })
}

/// `ran`, named, most time first, at most `top`.
fn named(
    ran: &RanBy,
    trace: &Trace,
    names: &HashMap<i32, TaskName>,
    top: usize,
) -> Vec<RanInstead> {
    let mut all: Vec<RanInstead> = ran
        .iter()
        .map(|&(tid, ns)| {
            let name = name_of(tid, trace, names);
            RanInstead {
                task: name.name,
                pid: name.pid,
                tid,
                ns,
            }
        })
        .collect();
    all.sort_by_key(|r| std::cmp::Reverse(r.ns));
    all.truncate(top);
    all
}

/// The tasks of `all` with their times added by task name, most first, at
/// most [`TOP_TASKS`].
fn add_by_task<'a>(all: impl Iterator<Item = &'a RanInstead>) -> Vec<RanInstead> {
    let mut sum: Vec<RanInstead> = Vec::new();
    for ran in all {
        match sum.iter_mut().find(|s| s.task == ran.task) {
            Some(known) => known.ns += ran.ns,
            None => sum.push(ran.clone()),
        }
    }
    sum.sort_by_key(|r| std::cmp::Reverse(r.ns));
    sum.truncate(TOP_TASKS);
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::late::{LateEvent, ReadCost};
    use crate::measure::late::{Cause, EventSplit, LateAccount};

    const MS: u64 = 1_000_000;
    const PROBE: i32 = 100;

    fn switch(at_ms: u64, prev_tid: i32, prev_runnable: bool, next_tid: i32) -> Switch {
        Switch {
            at_ns: at_ms * MS,
            cpu: 0,
            prev_tid,
            prev_runnable,
            next_tid,
        }
    }

    /// CPU 0: burn#1 runs; the probe wakes at 10 ms, waits behind burn#1,
    /// burn#2 and a kworker until 16 ms, is preempted by burn#1 from 18 to
    /// 21 ms, and sleeps at 24 ms.
    fn trace() -> Trace {
        Trace {
            switches: vec![
                switch(0, 0, false, 200),
                switch(12, 200, true, 201),
                switch(15, 201, true, 300),
                switch(16, 300, false, PROBE),
                switch(18, PROBE, true, 200),
                switch(21, 200, true, PROBE),
                switch(24, PROBE, false, 0),
            ],
            wakeups: vec![Wakeup {
                at_ns: 10 * MS,
                tid: PROBE,
                target_cpu: 0,
            }],
            comms: [(300, "kworker/0:1".to_string())].into(),
            from_ns: 0,
            to_ns: 30 * MS,
            ..Trace::default()
        }
    }

    fn names() -> HashMap<i32, TaskName> {
        [(200, "burn#1"), (201, "burn#2"), (PROBE, "probe x")]
            .into_iter()
            .map(|(tid, name)| {
                let named = TaskName {
                    name: name.into(),
                    pid: Some(tid),
                };
                (tid, named)
            })
            .collect()
    }

    fn late_with_event(due_ms: u64) -> LateCauses {
        let mut late = LateCauses::of(&LateAccount::new(), "late", true, ReadCost::default());
        let split = EventSplit {
            due_ns: due_ms * MS,
            woke_ns: 16 * MS + MS / 2,
            ended_ns: 25 * MS,
            cpu_wanted_ns: Some(5 * MS),
            cpu_used_ns: 5 * MS,
            involuntary: 1,
            ..EventSplit::default()
        };
        late.worst.push(LateEvent {
            cause: Cause::RunQueue,
            ..LateEvent::of(&split)
        });
        late
    }

    fn summary() -> ExplainSummary {
        ExplainSummary {
            status: ExplainStatus::Recorded,
            notice: None,
            method: "test".into(),
            cpus: vec![0],
            window_ns: None,
            cost: ExplainCost::default(),
            threads: Vec::new(),
        }
    }

    fn ran(late: &LateCauses) -> Vec<(String, u64)> {
        late.worst[0]
            .ran_instead
            .iter()
            .map(|r| (r.task.clone(), r.ns / 1000))
            .collect()
    }

    #[test]
    fn names_what_ran_while_the_event_waited_and_was_preempted() {
        let mut late = late_with_event(10);
        explain(&mut late, &trace(), &[PROBE], &names(), summary());
        assert_eq!(
            ran(&late),
            [
                ("burn#1".to_string(), 5_000),
                ("burn#2".to_string(), 3_000),
                ("kworker/0:1".to_string(), 1_000)
            ]
        );
        assert_eq!(late.worst[0].ran_instead[2].pid, None);
        let summary = late.explain.as_ref().unwrap();
        assert_eq!(summary.threads.len(), 1);
        let probe = &summary.threads[0];
        assert_eq!((probe.waits, probe.wait_ns), (2, 9 * MS));
        assert_eq!(probe.behind.iter().map(|r| r.ns).sum::<u64>(), 9 * MS);
        assert_eq!(probe.behind[0].task, "burn#1");
    }

    #[test]
    fn the_summary_keeps_the_waits_that_ended_in_the_window() {
        let mut late = late_with_event(10);
        let window = ExplainSummary {
            window_ns: Some([17 * MS, 30 * MS]),
            ..summary()
        };
        explain(&mut late, &trace(), &[PROBE], &names(), window);
        let probe = &late.explain.as_ref().unwrap().threads[0];
        assert_eq!((probe.waits, probe.wait_ns), (1, 3 * MS));
    }

    #[test]
    fn the_wait_of_an_event_counts_from_its_due_time() {
        let mut late = late_with_event(13);
        explain(&mut late, &trace(), &[PROBE], &names(), summary());
        // From 13 ms: burn#2 2 ms, the kworker 1 ms; burn#1 only preempting.
        assert_eq!(
            ran(&late),
            [
                ("burn#1".to_string(), 3_000),
                ("burn#2".to_string(), 2_000),
                ("kworker/0:1".to_string(), 1_000)
            ]
        );
    }

    #[test]
    fn an_event_due_while_the_previous_one_ran_names_that_ones_waits_after_its_due_time() {
        // Due at 11 ms, while the thread waited from its wake-up at 10 ms;
        // it started after the previous event, at 22 ms, and ended at 24.
        let mut late = late_with_event(11);
        late.worst[0].woke_ns = 22 * MS;
        late.worst[0].ended_ns = 24 * MS;
        explain(&mut late, &trace(), &[PROBE], &names(), summary());
        let ran: Vec<(&str, u64)> = late.worst[0]
            .ran_instead
            .iter()
            .map(|r| (r.task.as_str(), r.ns / MS))
            .collect();
        // burn#1 from 11 to 12 and from 18 to 21, burn#2 from 12 to 15,
        // the kworker from 15 to 16.
        assert_eq!(ran, [("burn#1", 4), ("burn#2", 3), ("kworker/0:1", 1)]);
    }

    #[test]
    fn an_event_on_a_cpu_not_recorded_names_nothing() {
        let mut late = late_with_event(10);
        late.worst[0].woke_cpu = 1;
        explain(&mut late, &trace(), &[PROBE], &names(), summary());
        assert!(late.worst[0].ran_instead.is_empty());
    }

    #[test]
    fn merging_adds_each_threads_waits_by_name() {
        let mut late = late_with_event(10);
        explain(&mut late, &trace(), &[PROBE], &names(), summary());
        let one = late.explain.clone().unwrap();
        let off = ExplainSummary::off("test", "not root".into(), ExplainCost::default());
        let merged = ExplainSummary::merged(&[&one, &one, &off]);
        assert_eq!(merged.status, ExplainStatus::Off);
        assert_eq!(merged.notice.as_deref(), Some("not root"));
        assert_eq!(merged.threads[0].wait_ns, 18 * MS);
        assert_eq!(merged.threads[0].behind[0].ns, 2 * 5 * MS);
        let json = serde_json::to_string(&merged).unwrap();
        assert_eq!(
            serde_json::from_str::<ExplainSummary>(&json).unwrap(),
            merged
        );
    }
}
