//! The packets of a trace being made: tracks (named, a process's, a
//! thread's, once per thread), slices with their arguments and flows,
//! instants, the ids they take, and lanes for slices that may overlap (a
//! track's slices must nest).

use super::protos::{
    event_type, AnnotationValue, Data, DebugAnnotation, ProcessDescriptor, ThreadDescriptor,
    TracePacket, TrackDescriptor, TrackEvent,
};
use std::collections::HashMap;

/// The one sequence every track event is written on.
const SEQUENCE: u32 = 1;

/// The packets of a trace being made, with the uuids and flow ids given.
pub struct Packets {
    pub packets: Vec<TracePacket>,
    next_id: u64,
    /// The track of each thread, by tid.
    threads: HashMap<i64, u64>,
    /// Whether the sequence's first packet was written.
    started: bool,
}

/// A slice to add: its track, span, name, category and arguments.
pub struct Slice<'a> {
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
    /// No packets yet.
    pub fn new() -> Self {
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
pub fn number(name: &str, value: u64) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.to_string()),
        value: Some(AnnotationValue::Uint(value)),
    }
}

/// A named argument holding words.
pub fn words(name: &str, value: &str) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.to_string()),
        value: Some(AnnotationValue::String(value.to_string())),
    }
}

/// Tracks that hold slices which may overlap, one lane each: a slice goes
/// in the first lane free at its start.
pub struct Lanes<'a> {
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
