//! The scheduler's side of a trace: the recorder's `sched_switch` and
//! `sched_wakeup` records as Perfetto's own ftrace events, so Perfetto
//! draws a track per CPU with every task by name, and the tasks that ran
//! while a late event waited, as slices on their threads' tracks with a
//! flow from the event to each.

use super::packets::{number, Lanes, Packets, Slice};
use super::protos::{
    Data, FtraceEvent, FtraceEventBundle, KernelEvent, SchedSwitch, SchedWakeup, TracePacket,
};
use super::ScenarioTrace;
use crate::measure::late::LoggedEvent;
use crate::system::sched_trace::{Switch, Trace as SchedRecords};
use std::collections::HashMap;

/// Events in one packet of a CPU's events.
const EVENTS_PER_BUNDLE: usize = 2_000;
/// The priority written for every task (the recorder does not read it):
/// nice 0's.
const PRIO: i32 = 120;
/// `prev_state` of a task that left the CPU to sleep (`S`); 0 is runnable.
const SLEEPING: i64 = 1;

/// The flows from each late event to the tasks that ran instead, by the
/// event's due time and end.
pub(super) struct RanInstead {
    flows: HashMap<(u64, u64), Vec<u64>>,
}

impl RanInstead {
    /// Adds a slice for each time a task ran while one of `scenario`'s
    /// worst late events waited (from the recorder's switches where there
    /// are records; else one slice of the total it ran, from the event's
    /// due time), each ending a flow from the event.
    pub fn of(packets: &mut Packets, scenario: &ScenarioTrace) -> Self {
        let by_cpu = scenario.sched.as_ref().map(switches_by_cpu);
        let mut flows: HashMap<(u64, u64), Vec<u64>> = HashMap::new();
        // Under each task's thread, lanes of the times it ran instead: two
        // late events' waits may overlap.
        let name = format!("ran while {} waited", scenario.probe);
        let mut lanes: HashMap<i32, Lanes> = HashMap::new();
        let mut waited: Vec<_> = scenario
            .worst
            .iter()
            .filter(|e| !e.ran_instead.is_empty())
            .collect();
        waited.sort_by_key(|e| e.due_ns);
        for event in waited {
            for task in &event.ran_instead {
                let spans = match &by_cpu {
                    Some(by_cpu) => {
                        let cpus = [event.woke_cpu, event.ended_cpu];
                        ran_on(by_cpu, &cpus, task.tid, event.due_ns, event.ended_ns)
                    }
                    None => vec![(event.due_ns, event.due_ns + task.ns)],
                };
                if spans.is_empty() {
                    continue;
                }
                let flow = packets.id();
                flows
                    .entry((event.due_ns, event.ended_ns))
                    .or_default()
                    .push(flow);
                let pid = task.pid.unwrap_or(task.tid);
                let thread = packets.thread_track(pid, task.tid.into(), &task.task);
                let lanes = lanes
                    .entry(task.tid)
                    .or_insert_with(|| Lanes::new(&name, thread, 0));
                for (n, (from_ns, to_ns)) in spans.into_iter().enumerate() {
                    let track = lanes.lane(packets, from_ns, to_ns);
                    packets.slice(Slice {
                        track,
                        from_ns,
                        to_ns,
                        name: name.clone(),
                        category: "ran_instead",
                        args: vec![number("ran_in_the_wait_ns", task.ns)],
                        flows: Vec::new(),
                        ends_flows: if n == 0 { vec![flow] } else { Vec::new() },
                    });
                }
            }
        }
        Self { flows }
    }

    /// The flows that start at `event`.
    pub fn flows_from(&self, event: &LoggedEvent) -> Vec<u64> {
        self.flows
            .get(&(event.due_ns, event.ended_ns))
            .cloned()
            .unwrap_or_default()
    }
}

/// Each CPU's switches, in time order.
fn switches_by_cpu(records: &SchedRecords) -> HashMap<u32, Vec<Switch>> {
    let mut by_cpu: HashMap<u32, Vec<Switch>> = HashMap::new();
    for switch in &records.switches {
        by_cpu.entry(switch.cpu).or_default().push(*switch);
    }
    for switches in by_cpu.values_mut() {
        switches.sort_by_key(|s| s.at_ns);
    }
    by_cpu
}

/// The spans in which `tid` ran on `cpus` between `from_ns` and `to_ns`.
fn ran_on(
    by_cpu: &HashMap<u32, Vec<Switch>>,
    cpus: &[u32],
    tid: i32,
    from_ns: u64,
    to_ns: u64,
) -> Vec<(u64, u64)> {
    let mut spans = Vec::new();
    let mut seen = Vec::new();
    for cpu in cpus {
        if seen.contains(cpu) {
            continue;
        }
        seen.push(*cpu);
        let Some(switches) = by_cpu.get(cpu) else {
            continue;
        };
        // From the last switch at or before `from_ns` (the one running
        // then) to the last before `to_ns`: the earlier and later ones
        // hold no part of the window.
        let first = switches
            .partition_point(|s| s.at_ns <= from_ns)
            .saturating_sub(1);
        for (n, switch) in switches.iter().enumerate().skip(first) {
            if switch.at_ns >= to_ns {
                break;
            }
            if switch.next_tid != tid {
                continue;
            }
            let until = switches.get(n + 1).map_or(to_ns, |next| next.at_ns);
            let (start, end) = (switch.at_ns.max(from_ns), until.min(to_ns));
            if start < end {
                spans.push((start, end));
            }
        }
    }
    spans.sort_unstable();
    spans
}

/// The recorder's records as ftrace events, one bundle per CPU and
/// [`EVENTS_PER_BUNDLE`] events, each task named by feelbench's name
/// where it has one, else by its `comm`.
pub(super) fn render(packets: &mut Packets, scenario: &ScenarioTrace, records: &SchedRecords) {
    let mut names: HashMap<i32, String> = records.comms.clone();
    names.extend(
        scenario
            .probe_tasks
            .iter()
            .filter_map(|t| Some((t.tid as i32, t.name.clone()?))),
    );
    names.extend(
        scenario
            .load_tasks
            .iter()
            .map(|t| (t.tid as i32, t.name.clone())),
    );
    let name = |tid: i32| match tid {
        0 => "swapper".to_string(),
        _ => names.get(&tid).cloned().unwrap_or_default(),
    };
    let mut by_cpu: HashMap<u32, Vec<FtraceEvent>> = HashMap::new();
    for switch in &records.switches {
        by_cpu.entry(switch.cpu).or_default().push(FtraceEvent {
            timestamp: Some(switch.at_ns),
            pid: Some(switch.prev_tid.max(0) as u32),
            event: Some(KernelEvent::SchedSwitch(SchedSwitch {
                prev_comm: Some(name(switch.prev_tid)),
                prev_pid: Some(switch.prev_tid),
                prev_prio: Some(PRIO),
                prev_state: Some(if switch.prev_runnable { 0 } else { SLEEPING }),
                next_comm: Some(name(switch.next_tid)),
                next_pid: Some(switch.next_tid),
                next_prio: Some(PRIO),
            })),
        });
    }
    for wakeup in &records.wakeups {
        by_cpu
            .entry(wakeup.target_cpu)
            .or_default()
            .push(FtraceEvent {
                timestamp: Some(wakeup.at_ns),
                pid: Some(0),
                event: Some(KernelEvent::SchedWakeup(SchedWakeup {
                    comm: Some(name(wakeup.tid)),
                    pid: Some(wakeup.tid),
                    prio: Some(PRIO),
                    success: Some(1),
                    target_cpu: Some(wakeup.target_cpu as i32),
                })),
            });
    }
    let mut cpus: Vec<u32> = by_cpu.keys().copied().collect();
    cpus.sort_unstable();
    for cpu in cpus {
        let mut events = by_cpu.remove(&cpu).unwrap_or_default();
        events.sort_by_key(|e| e.timestamp);
        // Moved into their bundles, not copied.
        let mut events = events.into_iter().peekable();
        while let Some(timestamp) = events.peek().map(|e| e.timestamp) {
            packets.packets.push(TracePacket {
                timestamp,
                data: Some(Data::FtraceEvents(FtraceEventBundle {
                    cpu: Some(cpu),
                    event: events.by_ref().take(EVENTS_PER_BUNDLE).collect(),
                })),
                ..TracePacket::default()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(at_ns: u64, cpu: u32, prev_tid: i32, next_tid: i32) -> Switch {
        Switch {
            at_ns,
            cpu,
            prev_tid,
            prev_runnable: true,
            next_tid,
        }
    }

    #[test]
    fn a_task_ran_between_its_switches_in_cut_to_the_wait() {
        let records = SchedRecords {
            switches: vec![
                switch(30, 0, 5, 9),
                switch(10, 0, 1, 5),
                switch(50, 0, 9, 5),
                switch(20, 1, 0, 5),
            ],
            ..SchedRecords::default()
        };
        let by_cpu = switches_by_cpu(&records);
        // Task 5 ran on CPU 0 from 10 to 30 and from 50 on; on CPU 1 from 20.
        assert_eq!(ran_on(&by_cpu, &[0, 0], 5, 15, 60), [(15, 30), (50, 60)]);
        assert_eq!(ran_on(&by_cpu, &[0, 1], 5, 15, 25), [(15, 25), (20, 25)]);
        assert_eq!(ran_on(&by_cpu, &[2], 5, 0, 100), []);
    }
}
