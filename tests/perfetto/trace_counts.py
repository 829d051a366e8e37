#!/usr/bin/env python3
"""Decodes a feelbench trace with Perfetto's own message definitions (PyPI's
`perfetto` package, `perfetto.protos`) and prints what it holds as JSON:
slices by category, the tracks' names, the late events' causes, flows, and
the scheduling events by kind. Exits 3 when the package is missing, so the
caller can skip saying so."""

import json
import sys

try:
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent
except ImportError as error:
    print(f"perfetto.protos unavailable: {error}", file=sys.stderr)
    sys.exit(3)


def main(path):
    trace = Trace()
    with open(path, "rb") as file:
        trace.ParseFromString(file.read())
    tracks = {}
    slices = {}
    causes = {}
    flows_started = flows_ended = 0
    counters = 0
    sched = {"sched_switch": 0, "sched_wakeup": 0}
    comms = set()
    threads = {}
    for packet in trace.packet:
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            tracks[d.uuid] = d.name
            if d.HasField("thread"):
                threads[d.thread.tid] = d.thread.thread_name
        elif packet.HasField("track_event"):
            event = packet.track_event
            if event.type == TrackEvent.TYPE_SLICE_BEGIN:
                category = event.categories[0] if event.categories else ""
                slices[category] = slices.get(category, 0) + 1
                flows_started += len(event.flow_ids)
                flows_ended += len(event.terminating_flow_ids)
                for arg in event.debug_annotations:
                    if arg.name == "cause":
                        causes[arg.string_value] = causes.get(arg.string_value, 0) + 1
            elif event.type == TrackEvent.TYPE_COUNTER:
                counters += 1
        elif packet.HasField("ftrace_events"):
            for event in packet.ftrace_events.event:
                kind = event.WhichOneof("event")
                sched[kind] = sched.get(kind, 0) + 1
                if kind == "sched_switch":
                    comms.add(event.sched_switch.next_comm)
    print(json.dumps({
        "packets": len(trace.packet),
        "slices": slices,
        "track_names": sorted(n for n in tracks.values() if n),
        "thread_names": sorted(set(threads.values())),
        "late_causes": causes,
        "flows_started": flows_started,
        "flows_ended": flows_ended,
        "counter_values": counters,
        "sched": sched,
        "switch_comms": sorted(comms),
    }))


if __name__ == "__main__":
    main(sys.argv[1])
