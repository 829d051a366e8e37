//! What a stored run document can show as a trace (`report --format
//! perfetto`), for a run that had no `--trace`: each measurement's worst
//! late events (the document keeps them whole, not every event) with
//! their cause, parts and what ran instead, its probe's and loads' tasks,
//! and, where the document knows its window (`--explain`), the loads'
//! work per sub-window.

use super::ScenarioTrace;
use crate::document::schema::{Measurement, RunDocument};
use crate::measure::late::{LoggedEvent, ThreadEvents};
use crate::measure::window::Window;

/// The scenarios of `run` (each repeat on its own) that have late events
/// kept.
pub fn of_document(run: &RunDocument) -> Vec<ScenarioTrace> {
    let mut traces = Vec::new();
    for scenario in &run.scenarios {
        let measurements = scenario.measurements();
        let count = measurements.len();
        for (n, measurement) in measurements.iter().enumerate() {
            let mut name = format!("{} under {}", scenario.probe, scenario.load);
            if count > 1 {
                name.push_str(&format!(" (repeat {} of {count})", n + 1));
            }
            traces.extend(of_measurement(name, &scenario.probe, measurement));
        }
    }
    traces
}

fn of_measurement(name: String, probe: &str, measurement: &Measurement) -> Option<ScenarioTrace> {
    let result = measurement.result.as_ref()?;
    let late = result.late.as_ref()?;
    let recorded = late
        .explain
        .as_ref()
        .and_then(|e| e.window_ns)
        .map(|[start_ns, end_ns]| Window { start_ns, end_ns });
    let spanned = Window {
        start_ns: late.worst.iter().map(|e| e.due_ns).min()?,
        end_ns: late.worst.iter().map(|e| e.ended_ns).max()?,
    };
    let events = late
        .worst
        .iter()
        .map(|e| LoggedEvent::of(&e.split, true, false, None))
        .collect();
    Some(ScenarioTrace {
        name,
        probe: probe.to_string(),
        window: recorded.unwrap_or(spanned),
        probe_tasks: result.sched.tasks.clone(),
        threads: vec![ThreadEvents {
            tid: result.sched.tasks.first().map_or(0, |t| t.tid),
            events,
            lost: 0,
        }],
        worst: late.worst.clone(),
        load_tasks: measurement
            .load_work
            .iter()
            .flat_map(|w| w.tasks.clone())
            .collect(),
        load_work: match recorded {
            Some(_) => measurement.load_work.clone(),
            None => Vec::new(),
        },
        samples: None,
        sched: None,
    })
}
