//! A scenario's telemetry as counter tracks: the system's pressure (PSI,
//! each line's share of each 100 ms between the window's samples), the
//! host's steal and the loads' work per sub-window of the measurement.

use super::packets::Packets;
use super::protos::{event_type, CounterDescriptor, TrackDescriptor, TrackEvent};
use super::ScenarioTrace;
use crate::measure::batches::batch_seconds;
use crate::system::counters::steal_pct;
use crate::system::telemetry::window::{PressureGrowth, WindowSamples};
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

/// PSI and steal between each two samples, at the first one's time.
fn telemetry(samples: &WindowSamples, counters: &mut BTreeMap<String, (String, Points)>) {
    for pair in samples.samples.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        let span_ns = after.taken_ns.saturating_sub(before.taken_ns);
        if span_ns == 0 {
            continue;
        }
        let growth = PressureGrowth::between(&before.pressure, &after.pressure);
        for (resource, kind, us) in growth.lines() {
            let share = 100.0 * us as f64 * 1e3 / span_ns as f64;
            counters
                .entry(format!("PSI {resource} {kind} (%)"))
                .or_insert_with(|| ("%".into(), Vec::new()))
                .1
                .push((before.taken_ns, share));
        }
        let steal: Vec<f64> = before
            .cpus
            .iter()
            .zip(&after.cpus)
            .filter_map(|(b, a)| steal_pct(b.as_ref()?, a.as_ref()?))
            .collect();
        if !steal.is_empty() {
            counters
                .entry("steal (% of CPU time)".into())
                .or_insert_with(|| ("%".into(), Vec::new()))
                .1
                .push((
                    before.taken_ns,
                    steal.iter().sum::<f64>() / steal.len() as f64,
                ));
        }
    }
}
