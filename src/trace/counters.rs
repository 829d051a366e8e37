//! A scenario's telemetry as counter tracks: the system's pressure (PSI,
//! each line's share of each 100 ms between the window's samples), the
//! host's steal and the loads' work per sub-window of the measurement.

use super::packets::Packets;
use super::protos::{event_type, CounterDescriptor, TrackDescriptor, TrackEvent};
use super::ScenarioTrace;
use crate::figures::late_context;
use crate::measure::batches::batch_seconds;
use crate::system::telemetry::window::WindowSamples;
use std::collections::BTreeMap;

/// A counter's values in time order, each holding until the next.
type Points = Vec<(u64, f64)>;

/// Adds the counter tracks of `scenario`.
pub(super) fn render(packets: &mut Packets, scenario: &ScenarioTrace) {
    let mut counters: BTreeMap<String, (String, Points)> = BTreeMap::new();
    if let Some(samples) = &scenario.samples {
        telemetry(samples, &mut counters);
    }
    let sub_window_s = batch_seconds(scenario.window);
    for work in &scenario.load_work {
        let name = format!("{} work ({}/s)", work.load, work.unit);
        let points = work
            .batch_units
            .iter()
            .enumerate()
            .filter_map(|(k, units)| {
                let at_ns = scenario.window.start_ns + (k as f64 * sub_window_s * 1e9) as u64;
                Some((at_ns, (*units)? / sub_window_s))
            })
            .collect();
        counters.insert(name, (format!("{}/s", work.unit), points));
    }
    for (name, (unit, points)) in counters {
        if points.is_empty() {
            continue;
        }
        let track = packets.track(TrackDescriptor {
            name: Some(format!("{}: {name}", scenario.name)),
            counter: Some(CounterDescriptor {
                unit_name: Some(unit),
            }),
            ..TrackDescriptor::default()
        });
        for (at_ns, value) in points {
            packets.event(
                at_ns,
                TrackEvent {
                    r#type: Some(event_type::COUNTER),
                    track_uuid: Some(track),
                    double_counter_value: Some(value),
                    ..TrackEvent::default()
                },
            );
        }
    }
}

/// PSI and steal between each two samples, at the first one's time, as a
/// late event's context reads them (`figures::late_context`).
fn telemetry(samples: &WindowSamples, counters: &mut BTreeMap<String, (String, Points)>) {
    let cpus: Vec<usize> = (0..samples.samples.first().map_or(0, |s| s.cpus.len())).collect();
    let mut push = |name: String, at_ns: u64, value: f64| {
        counters
            .entry(name)
            .or_insert_with(|| ("%".into(), Vec::new()))
            .1
            .push((at_ns, value));
    };
    for pair in samples.samples.windows(2) {
        let at_ns = pair[0].taken_ns;
        let Some(context) = late_context::of_span(pair, at_ns, pair[1].taken_ns, &cpus) else {
            continue;
        };
        for (resource, kind, us) in context.pressure.lines() {
            if let Some(share) = context.pressure_pct(us) {
                push(format!("PSI {resource} {kind} (%)"), at_ns, share);
            }
        }
        if let Some(steal) = context.steal_pct() {
            push("steal (% of CPU time)".into(), at_ns, steal);
        }
    }
}
