//! The inferred context of late events and the cgroups a scenario ran in,
//! as `report --explain` shows them: a line under each worst event (what
//! the window's telemetry said around it), then per scenario what it said
//! over all the late events, what each cgroup of the probe and the loads
//! went through (throttling, pressure; `unavailable` where the group has
//! no such file) and what the sampling cost. Every line of context says
//! `inferred`: it comes from samples 100 ms apart, not from the event.

use crate::document::schema::{Measurement, ScenarioResult};
use crate::figures::late::{LateCauses, LateEvent};
use crate::system::telemetry::window::{GroupGrowth, WindowTelemetry};

/// `context (inferred): host steal 0.0 %, cpu pressure some 68.0 %`, the
/// line under a late event that has a context.
pub fn event_line(event: &LateEvent) -> Option<String> {
    let context = event.context.as_ref()?;
    Some(format!("context (inferred): {}", context.words()))
}

/// The scenario's context lines: over its late events, then per
/// measurement its cgroups and the sampler's cost; empty where the window
/// was not sampled.
pub fn scenario_lines(scenario: &ScenarioResult, late: &LateCauses) -> String {
    let mut out = String::new();
    if let Some(context) = &late.context {
        out.push_str(&format!("context {}\n", context.words()));
    }
    let measurements: Vec<&Measurement> = match scenario.repeats.is_empty() {
        true => vec![&scenario.outcome],
        false => scenario.repeats.iter().collect(),
    };
    let several = measurements.len() > 1;
    for (i, measurement) in measurements.iter().enumerate() {
        let Some(window) = measurement
            .telemetry
            .as_ref()
            .and_then(|t| t.window.as_ref())
        else {
            continue;
        };
        let label = match several {
            true => format!("repeat {}: ", i + 1),
            false => String::new(),
        };
        for group in &window.cgroups {
            out.push_str(&format!("{label}{}\n", group_line(group, window.span_ms)));
        }
        out.push_str(&format!("{label}{}\n", sampler_line(window)));
        for error in &window.errors {
            out.push_str(&format!("{label}notice: window telemetry: {error}\n"));
        }
    }
    out
}

/// `cgroup v1 cpu /sys/fs/cgroup/cpu (probe, loads): throttled 0 of 0
/// periods (0.0 ms); pressure unavailable`.
fn group_line(group: &GroupGrowth, span_ms: f64) -> String {
    let throttling = match (group.nr_throttled, group.nr_periods, group.throttled_ns) {
        (Some(throttled), Some(periods), Some(ns)) => format!(
            "throttled {throttled} of {periods} periods ({:.1} ms)",
            ns as f64 / 1e6
        ),
        _ => "throttling unavailable".to_string(),
    };
    let lines = group.pressure.lines();
    let pressure = match lines.is_empty() {
        true => "pressure unavailable".to_string(),
        false => {
            let pct = |us: u64| match span_ms > 0.0 {
                true => format!("{:.1} %", (us as f64 / 10.0 / span_ms).min(100.0)),
                false => "-".to_string(),
            };
            let words: Vec<String> = lines
                .into_iter()
                .map(|(resource, kind, us)| format!("{resource} {kind} {}", pct(us)))
                .collect();
            format!("pressure {}", words.join(", "))
        }
    };
    format!(
        "{} {} ({}): {throttling}; {pressure}",
        group.group.hierarchy,
        group.group.path.display(),
        group.group.roles.join(", ")
    )
}

/// `window sampled every 100 ms: 22 samples over 2.04 s, the sampler's
/// CPU 9.4 ms (0.46 % of a CPU)`.
fn sampler_line(window: &WindowTelemetry) -> String {
    let share = window
        .sampler_cpu_pct()
        .map_or(String::new(), |pct| format!(" ({pct:.2} % of a CPU)"));
    format!(
        "window sampled every {} ms: {} samples over {:.2} s, the sampler's CPU {:.1} ms{share}",
        window.every_ms,
        window.samples,
        window.span_ms / 1e3,
        window.sampler_cpu_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::cgroup::watch::WatchedGroup;
    use crate::system::telemetry::window::PressureGrowth;

    fn group(hierarchy: &str, throttled: Option<u64>, pressure: PressureGrowth) -> GroupGrowth {
        GroupGrowth {
            group: WatchedGroup {
                hierarchy: hierarchy.into(),
                path: "/cg/x".into(),
                roles: vec!["probe".into(), "loads".into()],
            },
            nr_periods: throttled.map(|t| t * 2),
            nr_throttled: throttled,
            throttled_ns: throttled.map(|t| t * 5_000_000),
            pressure,
        }
    }

    #[test]
    fn a_group_says_what_it_has_and_unavailable_for_what_it_has_not() {
        let v1 = group("cgroup v1 cpu", Some(3), PressureGrowth::default());
        assert_eq!(
            group_line(&v1, 2000.0),
            "cgroup v1 cpu /cg/x (probe, loads): throttled 3 of 6 periods (15.0 ms); pressure unavailable"
        );
        let pressure = PressureGrowth {
            memory_some_us: Some(500_000),
            memory_full_us: Some(0),
            ..PressureGrowth::default()
        };
        assert_eq!(
            group_line(&group("cgroup v2", None, pressure), 2000.0),
            "cgroup v2 /cg/x (probe, loads): throttling unavailable; pressure memory some 25.0 %, memory full 0.0 %"
        );
    }

    #[test]
    fn the_sampler_line_gives_its_cost_as_a_share_of_a_cpu() {
        let window = WindowTelemetry {
            every_ms: 100.0,
            span_ms: 2000.0,
            samples: 21,
            sampler_cpu_ms: 4.0,
            cgroups: vec![],
            errors: vec![],
        };
        assert_eq!(
            sampler_line(&window),
            "window sampled every 100 ms: 21 samples over 2.00 s, the sampler's CPU 4.0 ms (0.20 % of a CPU)"
        );
    }
}
