//! A run's scenarios as Perfetto packets: a track of the scenarios, each
//! a named range of time; the probe's process with a track of events per
//! thread (each event a slice from its due time to its end, late ones
//! named by their cause with their parts as arguments, dropped ones
//! marked) and beside it the time each was allowed; the loads' processes
//! and threads named as feelbench names them; then the counters and the
//! scheduling events.

use super::protos::{
    event_type, AnnotationValue, Data, DebugAnnotation, ProcessDescriptor, ThreadDescriptor, Trace,
    TracePacket, TrackDescriptor, TrackEvent,
};
use super::{counters, sched, ScenarioTrace};
use crate::measure::late::{LoggedEvent, ThreadEvents};
use std::collections::HashMap;

/// The one sequence every track event is written on.
const SEQUENCE: u32 = 1;

/// The packets of a trace being made, with the uuids and flow ids given.
pub(super) struct Packets {
    pub packets: Vec<TracePacket>,
    next_id: u64,
    /// The track of each thread, by tid.
    threads: HashMap<i64, u64>,
    /// Whether the sequence's first packet was written.
    started: bool,
}

/// A slice to add: its track, span, name, category and arguments.
pub(super) struct Slice<'a> {
    pub track: u64,
    pub from_ns: u64,
    pub to_ns: u64,
    pub name: String,
    pub category: &'a str,
    pub args: Vec<DebugAnnotation>,
    /// Flows it starts, and flows it ends.
    pub flows: Vec<u64>,
    pub ends_flows: Vec<u64>,
}

impl Packets {
    fn new() -> Self {
        Self {
            packets: Vec::new(),
            next_id: 1,
            threads: HashMap::new(),
            started: false,
        }
    }

    /// A fresh id for a track or a flow.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Describes a track; returns its uuid.
    pub fn track(&mut self, descriptor: TrackDescriptor) -> u64 {
        let uuid = self.id();
        self.packets.push(TracePacket {
            data: Some(Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(uuid),
                ..descriptor
            })),
            ..TracePacket::default()
        });
        uuid
    }

    /// A track named `name` under `parent`.
    pub fn named_track(&mut self, name: &str, parent: Option<u64>, rank: i32) -> u64 {
        self.track(TrackDescriptor {
            name: Some(name.to_string()),
            parent_uuid: parent,
            sibling_order_rank: Some(rank),
            ..TrackDescriptor::default()
        })
    }

    /// The track of thread `tid` of process `pid`, named `name` the
    /// first time it is asked for.
    pub fn thread_track(&mut self, pid: i32, tid: i64, name: &str) -> u64 {
        if let Some(uuid) = self.threads.get(&tid) {
            return *uuid;
        }
        let uuid = self.track(TrackDescriptor {
            thread: Some(ThreadDescriptor {
                pid: Some(pid),
                tid: Some(tid),
                thread_name: Some(name.to_string()),
            }),
            ..TrackDescriptor::default()
        });
        self.threads.insert(tid, uuid);
        uuid
    }

    /// A process's track, named `name`.
    pub fn process_track(&mut self, pid: i32, name: &str) -> u64 {
        self.track(TrackDescriptor {
            process: Some(ProcessDescriptor {
                pid: Some(pid),
                process_name: Some(name.to_string()),
            }),
            ..TrackDescriptor::default()
        })
    }

    /// A track event at `at_ns`.
    pub fn event(&mut self, at_ns: u64, event: TrackEvent) {
        let first = !std::mem::replace(&mut self.started, true);
        self.packets.push(TracePacket {
            timestamp: Some(at_ns),
            trusted_packet_sequence_id: Some(SEQUENCE),
            sequence_flags: first.then_some(1),
            data: Some(Data::TrackEvent(event)),
        });
    }

    /// A slice: its begin, with its name and arguments, and its end.
    pub fn slice(&mut self, slice: Slice) {
        let track_uuid = Some(slice.track);
        self.event(
            slice.from_ns,
            TrackEvent {
                r#type: Some(event_type::SLICE_BEGIN),
                track_uuid,
                name: Some(slice.name),
                categories: vec![slice.category.to_string()],
                debug_annotations: slice.args,
                flow_ids: slice.flows,
                terminating_flow_ids: slice.ends_flows,
                ..TrackEvent::default()
            },
        );
        self.event(
            slice.to_ns.max(slice.from_ns + 1),
            TrackEvent {
                r#type: Some(event_type::SLICE_END),
                track_uuid,
                ..TrackEvent::default()
            },
        );
    }

    /// An instant named `name` on `track`.
    pub fn instant(&mut self, track: u64, at_ns: u64, name: &str, category: &str) {
        self.event(
            at_ns,
            TrackEvent {
                r#type: Some(event_type::INSTANT),
                track_uuid: Some(track),
                name: Some(name.to_string()),
                categories: vec![category.to_string()],
                ..TrackEvent::default()
            },
        );
    }
}

/// A named argument holding a number.
pub(super) fn number(name: &str, value: u64) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.to_string()),
        value: Some(AnnotationValue::Uint(value)),
    }
}

/// A named argument holding words.
pub(super) fn words(name: &str, value: &str) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.to_string()),
        value: Some(AnnotationValue::String(value.to_string())),
    }
}

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

/// Tracks that hold slices which may overlap, one lane each: a slice goes
/// in the first lane free at its start.
pub(super) struct Lanes<'a> {
    name: &'a str,
    parent: u64,
    rank: i32,
    lanes: Vec<(u64, u64)>,
}

impl<'a> Lanes<'a> {
    pub fn new(name: &'a str, parent: u64, rank: i32) -> Self {
        Self {
            name,
            parent,
            rank,
            lanes: Vec::new(),
        }
    }

    /// The lane for a slice from `from_ns` to `to_ns`.
    pub fn lane(&mut self, packets: &mut Packets, from_ns: u64, to_ns: u64) -> u64 {
        let end = to_ns.max(from_ns + 1);
        if let Some(lane) = self.lanes.iter_mut().find(|(_, free)| *free <= from_ns) {
            lane.1 = end;
            return lane.0;
        }
        let name = match self.lanes.len() {
            0 => self.name.to_string(),
            n => format!("{} (overlapping {})", self.name, n + 1),
        };
        let uuid = packets.named_track(&name, Some(self.parent), self.rank);
        self.lanes.push((uuid, end));
        uuid
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
    use super::super::protos::Data;
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
