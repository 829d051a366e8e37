//! A run's scenarios as Perfetto packets: a track of the scenarios, each
//! a named range of time; the probe's process with a track of events per
//! thread (each event a slice from its due time to its end, late ones
//! named by their cause with their parts as arguments, dropped ones
//! marked) and beside it the time each was allowed; the loads' processes
//! and threads named as feelbench names them; then the counters and the
//! scheduling events.

use super::packets::{number, words, Lanes, Packets, Slice};
use super::protos::{AnnotationValue, DebugAnnotation, Trace};
use super::{counters, sched, ScenarioTrace};
use crate::measure::late::{LoggedEvent, ThreadEvents};

/// The trace of `scenarios`, in run order.
pub fn render(scenarios: &[ScenarioTrace]) -> Trace {
    let mut packets = Packets::new();
    let ranges = packets.named_track("feelbench scenarios", None, 0);
    for scenario in scenarios {
        render_scenario(&mut packets, ranges, scenario);
    }
    Trace {
        packet: packets.packets,
    }
}

fn render_scenario(packets: &mut Packets, ranges: u64, scenario: &ScenarioTrace) {
    let lost: u64 = scenario.threads.iter().map(|t| t.lost).sum();
    let events: usize = scenario.threads.iter().map(|t| t.events.len()).sum();
    packets.slice(Slice {
        track: ranges,
        from_ns: scenario.window.start_ns,
        to_ns: scenario.window.end_ns,
        name: scenario.name.clone(),
        category: "scenario",
        args: vec![
            number("events", events as u64),
            number("events_not_kept", lost),
        ],
        flows: Vec::new(),
        ends_flows: Vec::new(),
    });
    let probe_pid = scenario.probe_tasks.first().map_or(0, |t| t.pid as i32);
    let process = packets.process_track(probe_pid, &format!("probe {}", scenario.probe));
    for task in &scenario.probe_tasks {
        packets.thread_track(
            task.pid as i32,
            task.tid.into(),
            &probe_thread_name(scenario, task.tid),
        );
    }
    name_loads(packets, scenario);
    let ran_instead = sched::RanInstead::of(packets, scenario);
    for (rank, thread) in scenario.threads.iter().enumerate() {
        let name = probe_thread_name(scenario, thread.tid);
        render_thread(packets, process, rank as i32, &name, thread, &ran_instead);
    }
    counters::render(packets, scenario);
    if let Some(records) = &scenario.sched {
        sched::render(packets, scenario, records);
    }
}

/// A probe thread's name: its `comm` as read in the window, or its tid.
fn probe_thread_name(scenario: &ScenarioTrace, tid: u32) -> String {
    scenario
        .probe_tasks
        .iter()
        .find(|t| t.tid == tid)
        .and_then(|t| t.name.clone())
        .unwrap_or_else(|| format!("{} thread {tid}", scenario.probe))
}

/// Each load process and thread, by feelbench's name (`burn#2`).
fn name_loads(packets: &mut Packets, scenario: &ScenarioTrace) {
    let mut named_pids = Vec::new();
    for task in &scenario.load_tasks {
        if !named_pids.contains(&task.pid) {
            named_pids.push(task.pid);
            let leader = scenario
                .load_tasks
                .iter()
                .find(|t| t.tid == t.pid && t.pid == task.pid);
            let name = leader.map_or(task.name.as_str(), |t| t.name.as_str());
            packets.process_track(task.pid as i32, &format!("load {name}"));
        }
        packets.thread_track(task.pid as i32, task.tid.into(), &task.name);
    }
}

fn render_thread(
    packets: &mut Packets,
    process: u64,
    rank: i32,
    name: &str,
    thread: &ThreadEvents,
    ran_instead: &sched::RanInstead,
) {
    let events_name = format!("{name}: events");
    let expected_name = format!("{name}: expected");
    let mut actual = Lanes::new(&events_name, process, 2 * rank);
    let mut expected = Lanes::new(&expected_name, process, 2 * rank + 1);
    let mut sorted: Vec<&LoggedEvent> = thread.events.iter().collect();
    sorted.sort_by_key(|e| e.due_ns);
    for event in sorted {
        let lane = actual.lane(packets, event.due_ns, event.ended_ns);
        let flows = ran_instead.flows_from(event);
        packets.slice(Slice {
            track: lane,
            from_ns: event.due_ns,
            to_ns: event.ended_ns,
            name: event_name(event),
            category: "event",
            args: event_args(event),
            flows,
            ends_flows: Vec::new(),
        });
        if event.dropped {
            packets.instant(lane, event.woke_ns, "dropped frame", "dropped");
        }
        if let Some(allowed_ns) = event.allowed_ns {
            let lane = expected.lane(packets, event.due_ns, allowed_ns);
            packets.slice(Slice {
                track: lane,
                from_ns: event.due_ns,
                to_ns: allowed_ns,
                name: "expected".into(),
                category: "expected",
                args: Vec::new(),
                flows: Vec::new(),
                ends_flows: Vec::new(),
            });
        }
    }
}

/// A slice's name: on time, dropped, or late with its cause, as
/// FrameTimeline names a frame's jank.
fn event_name(event: &LoggedEvent) -> String {
    match (event.late, event.dropped) {
        (true, true) => format!("dropped, late: {}", event.cause.words()),
        (true, false) => format!("late: {}", event.cause.words()),
        (false, true) => "dropped".into(),
        (false, false) => "on time".into(),
    }
}

/// An event's arguments: late or not, its cause and its delay's parts.
fn event_args(event: &LoggedEvent) -> Vec<DebugAnnotation> {
    let mut args = vec![
        DebugAnnotation {
            name: Some("late".into()),
            value: Some(AnnotationValue::Bool(event.late)),
        },
        number(
            "woke_after_due_ns",
            event.woke_ns.saturating_sub(event.due_ns),
        ),
    ];
    if let Some(allowed_ns) = event.allowed_ns {
        args.push(number(
            "allowed_ns",
            allowed_ns.saturating_sub(event.due_ns),
        ));
    }
    if event.late {
        args.push(words("cause", event.cause.key()));
        args.push(number("delay_ns", event.parts.total_ns()));
        args.extend(
            event
                .parts
                .named()
                .into_iter()
                .filter(|(_, ns)| *ns > 0)
                .map(|(part, ns)| number(part, ns)),
        );
    }
    args
}

#[cfg(test)]
mod tests {
    use super::super::protos::{event_type, Data};
    use super::*;
    use crate::measure::late::{Cause, Parts};
    use crate::measure::window::Window;

    const MS: u64 = 1_000_000;

    fn event(due_ms: u64, ended_ms: u64, late: bool, dropped: bool) -> LoggedEvent {
        LoggedEvent {
            due_ns: due_ms * MS,
            woke_ns: due_ms * MS,
            ended_ns: ended_ms * MS,
            allowed_ns: (!dropped).then_some((due_ms + 10) * MS),
            late,
            dropped,
            cause: Cause::RunQueue,
            parts: Parts {
                run_queue_wake_ns: (ended_ms - due_ms) * MS,
                ..Parts::default()
            },
        }
    }

    fn scenario(events: Vec<LoggedEvent>) -> ScenarioTrace {
        ScenarioTrace {
            name: "x under burn".into(),
            probe: "x".into(),
            window: Window::ms(0, 100),
            probe_tasks: Vec::new(),
            threads: vec![ThreadEvents {
                tid: 7,
                events,
                lost: 0,
            }],
            worst: Vec::new(),
            load_tasks: Vec::new(),
            load_work: Vec::new(),
            samples: None,
            sched: None,
        }
    }

    /// The begin events of `trace`'s slices of `category`, by name, and
    /// the tracks they are on.
    fn begun(trace: &Trace, category: &str) -> Vec<(String, u64)> {
        trace
            .packet
            .iter()
            .filter_map(|p| match &p.data {
                Some(Data::TrackEvent(e)) if e.categories.iter().any(|c| c == category) => {
                    Some((e.name.clone()?, e.track_uuid?))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn each_event_is_a_slice_beside_its_allowed_time_an_overlap_in_a_lane_of_its_own() {
        // The second event was due while the first, late, still ran.
        let events = vec![
            event(0, 25, true, false),
            event(20, 30, false, false),
            event(40, 40, false, true),
        ];
        let trace = render(&[scenario(events)]);
        let slices = begun(&trace, "event");
        let names: Vec<&str> = slices.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["late: run-queue wait", "on time", "dropped"]);
        assert_ne!(slices[0].1, slices[1].1, "overlapping slices share a track");
        assert_eq!(slices[0].1, slices[2].1, "a free lane is used again");
        assert_eq!(begun(&trace, "expected").len(), 2);
        assert_eq!(begun(&trace, "dropped").len(), 1);
        assert_eq!(begun(&trace, "scenario").len(), 1);
        // Every begin has its end, never before it.
        let (mut begins, mut ends) = (0, 0);
        for packet in &trace.packet {
            if let Some(Data::TrackEvent(e)) = &packet.data {
                match e.r#type {
                    Some(event_type::SLICE_BEGIN) => begins += 1,
                    Some(event_type::SLICE_END) => ends += 1,
                    _ => {}
                }
            }
        }
        assert_eq!((begins, ends), (6, 6));
    }

    #[test]
    fn a_late_event_carries_its_cause_and_parts() {
        let args = event_args(&event(0, 25, true, false));
        let named = |name: &str| {
            args.iter()
                .find(|a| a.name.as_deref() == Some(name))
                .cloned()
        };
        assert_eq!(
            named("cause").and_then(|a| a.value),
            Some(AnnotationValue::String("run_queue".into()))
        );
        assert_eq!(
            named("run_queue_wake_ns").and_then(|a| a.value),
            Some(AnnotationValue::Uint(25 * MS))
        );
        assert!(event_args(&event(0, 5, false, false))
            .iter()
            .all(|a| a.name.as_deref() != Some("cause")));
    }
}
