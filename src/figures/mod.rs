//! The figures a scenario is judged by (mean latency, p99, deadlines met,
//! ...): their names, which way is better, how a change is expressed, and
//! where each one's value is found in a measurement, its sub-windows and its
//! repeats.

pub mod estimate;

use crate::report::schema::{Batch, Measurement, ProbeResult, ScenarioStatus};
use serde::Serialize;

/// One figure of a scenario. `Work` is the rate of one part of the load.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Mean,
    Sd,
    P50,
    P99,
    Max,
    Desired,
    Deadlines,
    Fps,
    Low1,
    Work(String),
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// How a change of a figure is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeUnit {
    /// Relative change in % (latencies, rates).
    Percent,
    /// Difference in percentage points (figures that are themselves %).
    Points,
}

/// The figure keys `--figure` accepts, in display order (`work` stands for
/// every part of the load).
pub const KEYS: &[&str] = &[
    "mean",
    "sd",
    "p50",
    "p99",
    "max",
    "desired",
    "deadlines",
    "fps",
    "low1",
    "work",
];

/// The figures compared when none are chosen.
pub const DEFAULT_KEYS: &[&str] = &[
    "mean",
    "p99",
    "max",
    "desired",
    "deadlines",
    "fps",
    "low1",
    "work",
];

/// The headline figures that get confidence intervals in a run.
pub const HEADLINE: &[Figure] = &[Figure::Mean, Figure::P99, Figure::Deadlines, Figure::Fps];

impl Figure {
    /// The figures of `key` present in `measurement` (`work`: one per load part).
    pub fn of_key(key: &str, measurement: &Measurement) -> Vec<Figure> {
        if key == "work" {
            return measurement
                .load_work
                .iter()
                .map(|w| Figure::Work(w.load.clone()))
                .collect();
        }
        let Some(figure) = Figure::from_key(key) else {
            return Vec::new();
        };
        measurement
            .result
            .as_ref()
            .and_then(|r| figure.of_result(r))
            .map(|_| vec![figure.clone()])
            .unwrap_or_default()
    }

    /// The figure stored under `key` (`work:PART` for a load part).
    pub fn from_key(key: &str) -> Option<Figure> {
        Some(match key {
            "mean" => Figure::Mean,
            "sd" => Figure::Sd,
            "p50" => Figure::P50,
            "p99" => Figure::P99,
            "max" => Figure::Max,
            "desired" => Figure::Desired,
            "deadlines" => Figure::Deadlines,
            "fps" => Figure::Fps,
            "low1" => Figure::Low1,
            other => Figure::Work(other.strip_prefix("work:")?.to_string()),
        })
    }

    /// A value of the figure in the unit it is shown in, without the unit.
    pub fn show(&self, value: f64) -> String {
        let shown = value * self.display_scale();
        match self {
            Figure::Work(_) => crate::report::table::rate(shown),
            _ if self.display_scale() < 1.0 => format!("{shown:.3}"),
            _ => format!("{shown:.1}"),
        }
    }

    /// The key the figure is chosen and stored by (`work:PART` for a load part).
    pub fn key(&self) -> String {
        match self {
            Figure::Work(part) => format!("work:{part}"),
            other => other.simple_key().to_string(),
        }
    }

    fn simple_key(&self) -> &'static str {
        match self {
            Figure::Mean => "mean",
            Figure::Sd => "sd",
            Figure::P50 => "p50",
            Figure::P99 => "p99",
            Figure::Max => "max",
            Figure::Desired => "desired",
            Figure::Deadlines => "deadlines",
            Figure::Fps => "fps",
            Figure::Low1 => "low1",
            Figure::Work(_) => "work",
        }
    }

    /// A label with the unit values are shown in.
    pub fn label(&self) -> String {
        match self {
            Figure::Mean => "latency mean (ms)".into(),
            Figure::Sd => "latency SD (ms)".into(),
            Figure::P50 => "latency p50 (ms)".into(),
            Figure::P99 => "latency p99 (ms)".into(),
            Figure::Max => "latency max (ms)".into(),
            Figure::Desired => "desired CPU %".into(),
            Figure::Deadlines => "deadlines met %".into(),
            Figure::Fps => "FPS".into(),
            Figure::Low1 => "1% low FPS".into(),
            Figure::Work(part) => format!("{part} work /s"),
        }
    }

    /// Which way the figure improves.
    pub fn better(&self) -> Better {
        match self {
            Figure::Mean | Figure::Sd | Figure::P50 | Figure::P99 | Figure::Max => Better::Lower,
            _ => Better::Higher,
        }
    }

    /// How its changes are expressed.
    pub fn change_unit(&self) -> ChangeUnit {
        match self {
            Figure::Desired | Figure::Deadlines => ChangeUnit::Points,
            _ => ChangeUnit::Percent,
        }
    }

    /// Latency figures are stored in µs and shown in ms.
    fn display_scale(&self) -> f64 {
        match self.better() {
            Better::Lower => 1e-3,
            Better::Higher => 1.0,
        }
    }

    /// The figure's value in a measurement, `None` when it has none (a
    /// failed measurement, a figure its probe does not have).
    pub fn of(&self, measurement: &Measurement) -> Option<f64> {
        if measurement.status != ScenarioStatus::Ok {
            return None;
        }
        match self {
            Figure::Work(part) => measurement
                .load_work
                .iter()
                .find(|w| &w.load == part)
                .map(|w| w.rate_per_s),
            _ => self.of_result(measurement.result.as_ref()?),
        }
    }

    fn of_result(&self, r: &ProbeResult) -> Option<f64> {
        let latency = r.latency_us;
        match self {
            Figure::Mean => latency.map(|l| l.mean_us),
            Figure::Sd => latency.map(|l| l.sd_us),
            Figure::P50 => latency.map(|l| l.p50_us),
            Figure::P99 => latency.map(|l| l.p99_us),
            Figure::Max => latency.map(|l| l.max_us),
            Figure::Desired => r.cpu.desired_pct,
            Figure::Deadlines => r.deadlines.map(|d| d.met_pct),
            Figure::Fps => r.gaming.map(|g| g.fps),
            Figure::Low1 => r.gaming.map(|g| g.low_1pct_fps),
            Figure::Work(_) => None,
        }
    }

    /// The figure's value in each sub-window of `result`, in time order;
    /// empty when the figure is not kept per sub-window (SD, p50, max, load
    /// work) or the probe does not have it. Sub-windows without a value
    /// (no frame ran) are left out.
    pub fn batch_values(&self, result: &ProbeResult) -> Vec<f64> {
        if self.of_result(result).is_none() {
            return Vec::new();
        }
        let value = |b: &Batch| -> Option<f64> {
            match self {
                Figure::Mean => b.mean_us,
                Figure::P99 => b.p99_us,
                Figure::Desired => {
                    (b.cpu_wanted_ms > 0.0).then(|| 100.0 * b.cpu_received_ms / b.cpu_wanted_ms)
                }
                Figure::Deadlines => {
                    (b.periods > 0).then(|| 100.0 * b.met as f64 / b.periods as f64)
                }
                Figure::Fps => (b.seconds > 0.0).then(|| b.frames as f64 / b.seconds),
                Figure::Low1 => b.frame_p99_us.filter(|&us| us > 0.0).map(|us| 1e6 / us),
                _ => None,
            }
        };
        result.batches.iter().filter_map(value).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn every_key_names_figures_and_back() {
        let run = fixture::run();
        let measurement = &run.scenarios[1].outcome;
        for key in KEYS {
            for figure in Figure::of_key(key, measurement) {
                assert!(figure.key().starts_with(key), "{key} → {}", figure.key());
                assert!(figure.of(measurement).is_some(), "{key}");
                assert_eq!(Figure::from_key(&figure.key()), Some(figure));
            }
        }
        assert_eq!(
            Figure::of_key("work", measurement),
            vec![Figure::Work("burn".into())]
        );
        assert!(
            Figure::of_key("fps", measurement).is_empty(),
            "audio has no FPS"
        );
        assert!(Figure::of_key("nonsense", measurement).is_empty());
    }

    #[test]
    fn directions_and_units() {
        assert_eq!(Figure::P99.better(), Better::Lower);
        assert_eq!(Figure::Deadlines.better(), Better::Higher);
        assert_eq!(Figure::Deadlines.change_unit(), ChangeUnit::Points);
        assert_eq!(
            Figure::Work("burn".into()).change_unit(),
            ChangeUnit::Percent
        );
    }

    #[test]
    fn failed_measurements_have_no_figures() {
        let run = fixture::run();
        let failed = run
            .scenarios
            .iter()
            .find(|s| s.outcome.status == ScenarioStatus::Failed)
            .unwrap();
        assert_eq!(Figure::Mean.of(&failed.outcome), None);
    }
}
