//! The figures a scenario is judged by (mean latency, p99, deadlines met,
//! ...): their names, which way is better, how a change is expressed, and
//! where each one's value is found in a measurement, its sub-windows and its
//! repeats.

pub mod estimate;

use crate::measure::latency::LatencyHistogram;
use crate::report::schema::{Batch, Measurement, ProbeResult, ScenarioStatus};
use crate::stats::batch_means;
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

/// The figures compared when none are chosen: all but SD and p50, which
/// mean and p99 already tell.
pub fn default_keys() -> Vec<String> {
    KEYS.iter()
        .filter(|k| !matches!(**k, "sd" | "p50"))
        .map(|k| k.to_string())
        .collect()
}

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

    /// `(low, high)` cut to the values the figure can take: none is
    /// negative, and shares in % do not exceed 100 (desired CPU can, a
    /// little, when a frame ran longer than wanted).
    pub fn within_range(&self, (low, high): (f64, f64)) -> (f64, f64) {
        let high = match self {
            Figure::Deadlines => high.min(100.0),
            _ => high,
        };
        (low.max(0.0), high)
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
    /// empty when the figure is not kept per sub-window (SD, p50, max, 1 %
    /// low, load work) or the probe does not have it. Sub-windows without a
    /// value (no frame ran) are left out. The p99 is taken over groups of
    /// neighbouring sub-windows large enough to have one (see
    /// [`P99_MIN_FRAMES`]).
    pub fn batch_values(&self, result: &ProbeResult) -> Vec<f64> {
        if self.of_result(result).is_none() {
            return Vec::new();
        }
        if *self == Figure::P99 {
            return grouped_p99(&result.batches);
        }
        let value = |b: &Batch| -> Option<f64> {
            match self {
                Figure::Mean => b.mean_us,
                Figure::Desired => {
                    (b.cpu_wanted_ms > 0.0).then(|| 100.0 * b.cpu_received_ms / b.cpu_wanted_ms)
                }
                Figure::Deadlines => {
                    (b.periods > 0).then(|| 100.0 * b.met as f64 / b.periods as f64)
                }
                Figure::Fps => (b.seconds > 0.0).then(|| b.frames as f64 / b.seconds),
                _ => None,
            }
        };
        result.batches.iter().filter_map(value).collect()
    }
}

/// Frames a group of sub-windows needs before its 99th percentile is more
/// than its largest value: below 100 the p99 of a group is its maximum, and
/// maxima of small groups say little about the p99 of the whole.
pub const P99_MIN_FRAMES: u64 = 100;

/// The p99 latency of consecutive groups of sub-windows holding at least
/// [`P99_MIN_FRAMES`] frames each (a short last group joins the one before);
/// empty when any sub-window lacks its histogram or there are fewer groups
/// than batch means need.
fn grouped_p99(batches: &[Batch]) -> Vec<f64> {
    let mut groups: Vec<(LatencyHistogram, u64)> = Vec::new();
    let mut current = (LatencyHistogram::new(), 0);
    for batch in batches.iter().filter(|b| b.frames > 0) {
        let Some(histogram) = batch
            .histogram
            .as_deref()
            .and_then(|h| LatencyHistogram::from_base64(h).ok())
        else {
            return Vec::new();
        };
        current.0.add(&histogram);
        current.1 += batch.frames;
        if current.1 >= P99_MIN_FRAMES {
            groups.push(std::mem::take(&mut current));
        }
    }
    if current.1 > 0 {
        match groups.last_mut() {
            Some(last) => last.0.add(&current.0),
            None => return Vec::new(),
        }
    }
    if groups.len() < batch_means::MIN_BATCHES {
        return Vec::new();
    }
    groups
        .iter()
        .map(|(h, _)| h.quantile_ns(0.99) as f64 / 1e3)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    fn batch_of(values_us: &[u64]) -> Batch {
        let mut h = LatencyHistogram::with_precision(2);
        for v in values_us {
            h.record_ns(v * 1000);
        }
        Batch {
            seconds: 1.0,
            frames: values_us.len() as u64,
            mean_us: None,
            p99_us: None,
            histogram: Some(h.to_base64()),
            frame_p99_us: None,
            periods: 0,
            met: 0,
            cpu_wanted_ms: 0.0,
            cpu_received_ms: 0.0,
        }
    }

    #[test]
    fn p99_is_taken_over_groups_of_at_least_100_frames() {
        // 20 sub-windows of 30 frames: groups of 4 (120 frames), 5 groups.
        let batches: Vec<Batch> = (0..20)
            .map(|i| batch_of(&(1..=30).map(|v| v * 10 + i).collect::<Vec<_>>()))
            .collect();
        let p99s = grouped_p99(&batches);
        assert_eq!(p99s.len(), 5);
        for p in &p99s {
            assert!(*p > 290.0 && *p < 325.0, "{p}");
        }
        // 12 frames per sub-window: 240 frames, two groups, too few.
        let small: Vec<Batch> = (0..20).map(|_| batch_of(&[1; 12])).collect();
        assert!(grouped_p99(&small).is_empty());
        // A sub-window without its histogram: no p99 values at all.
        let mut missing = batches.clone();
        missing[3].histogram = None;
        assert!(grouped_p99(&missing).is_empty());
    }

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
    fn intervals_stay_within_what_a_figure_can_be() {
        assert_eq!(Figure::Mean.within_range((-0.5, 2.0)), (0.0, 2.0));
        assert_eq!(Figure::Deadlines.within_range((97.0, 101.5)), (97.0, 100.0));
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
