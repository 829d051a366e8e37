//! The context of a scenario's late events: while the probe measures, a
//! thread of the orchestrator samples the window's telemetry, with the
//! cgroups the probe and the loads are in (`system::telemetry::window`);
//! afterwards the samples are joined to the probe's late events by time
//! (`figures::late_context`, labelled inferred) and what the cgroups went
//! through is kept with the scenario's telemetry.

use super::supervise::WorkerGroup;
use crate::figures::late_context;
use crate::figures::ProbeResult;
use crate::measure::clock::now_ns;
use crate::system::cgroup::watch::groups_of;
use crate::system::telemetry::window::{WindowSampler, WindowSamples, EVERY};
use crate::system::telemetry::ScenarioTelemetry;
use std::path::Path;

/// The window being sampled.
pub struct Sampling {
    sampler: Option<WindowSampler>,
    /// What kept the sampling from being whole.
    errors: Vec<String>,
}

/// Starts sampling the window, with the cgroups of worker `probe` and of
/// worker `load` (one of the loads, if any: they all join the same ones).
pub fn start(group: &WorkerGroup, probe: usize, load: Option<usize>) -> Sampling {
    let proc_root = Path::new("/proc");
    let mut members = vec![(group.pid(probe), "probe")];
    members.extend(load.map(|load| (group.pid(load), "loads")));
    let mut errors = Vec::new();
    let groups = groups_of(proc_root, &members).unwrap_or_else(|e| {
        errors.push(format!("the run's cgroups are unknown: {e}"));
        Vec::new()
    });
    let sampler = WindowSampler::start(proc_root, groups, EVERY, now_ns)
        .map_err(|e| errors.push(format!("cannot start the window's sampler: {e}")))
        .ok();
    Sampling { sampler, errors }
}

impl Sampling {
    /// Stops sampling and hands back the samples, with what went wrong.
    pub fn finish(self) -> WindowSamples {
        let mut samples = self.sampler.map(WindowSampler::finish).unwrap_or_default();
        samples.errors.splice(0..0, self.errors);
        samples
    }
}

/// Gives the late events of `result` their inferred context and
/// `telemetry` what the window's sampling found.
pub fn join(
    samples: &WindowSamples,
    result: &mut ProbeResult,
    telemetry: ScenarioTelemetry,
) -> ScenarioTelemetry {
    if let Some(late) = result.late.as_mut() {
        late_context::join(samples, late);
    }
    telemetry.with_window(samples.summary())
}
