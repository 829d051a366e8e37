//! The few of Perfetto's trace messages a feelbench trace uses, declared
//! with prost by the field numbers of Perfetto's own `.proto` files
//! (`protos/perfetto/trace/trace_packet.proto`, `track_event/*.proto`,
//! `ftrace/ftrace_event_bundle.proto`, `ftrace/sched.proto`); fields
//! feelbench does not write are left out, which the wire format allows.

/// `Trace`: the file is this message, a stream of packets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `TracePacket`: one timestamped piece of the trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// `SEQ_INCREMENTAL_STATE_CLEARED` (1) on a sequence's first packet.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(oneof = "Data", tags = "1, 11, 60")]
    pub data: Option<Data>,
}

/// What a packet carries.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
}

/// `TrackDescriptor`: a track, by its uuid, optionally a process's, a
/// thread's or a counter.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "14")]
    pub description: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    /// `ChildTracksOrdering`: 3 is EXPLICIT (by `sibling_order_rank`).
    #[prost(int32, optional, tag = "11")]
    pub child_ordering: Option<i32>,
    #[prost(int32, optional, tag = "12")]
    pub sibling_order_rank: Option<i32>,
}

/// `ProcessDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `ThreadDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `CounterDescriptor`: its unit's name only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

/// `TrackEvent.Type`.
pub mod event_type {
    pub const SLICE_BEGIN: i32 = 1;
    pub const SLICE_END: i32 = 2;
    pub const INSTANT: i32 = 3;
    pub const COUNTER: i32 = 4;
}

/// `TrackEvent`: a slice's begin or end, an instant or a counter value on
/// a track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    #[prost(fixed64, repeated, tag = "47")]
    pub flow_ids: Vec<u64>,
    #[prost(fixed64, repeated, tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `DebugAnnotation`: a named argument of an event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(oneof = "AnnotationValue", tags = "2, 3, 6")]
    pub value: Option<AnnotationValue>,
}

/// A debug annotation's value.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AnnotationValue {
    #[prost(bool, tag = "2")]
    Bool(bool),
    #[prost(uint64, tag = "3")]
    Uint(u64),
    #[prost(string, tag = "6")]
    String(String),
}

/// `FtraceEventBundle`: one CPU's kernel events.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

/// `FtraceEvent`: a timestamped kernel event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// The task that was running when it fired.
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(oneof = "KernelEvent", tags = "4, 17")]
    pub event: Option<KernelEvent>,
}

/// The kernel events feelbench writes.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum KernelEvent {
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
}

/// `SchedSwitchFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    /// 0 runnable (preempted), 1 sleeping (`TASK_INTERRUPTIBLE`).
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `SchedWakeupFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}
