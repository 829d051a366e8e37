//! The uncertainty of a scenario's figure, from the best source its data
//! offers: the spread across repeats when there are enough of them, else
//! batch means over the sub-windows of its measurement(s); and which bounds
//! of an interval were cut to the values its figure can take, which every
//! renderer marks (`≤0.000–0.201 ms`): such a bound is a limit, not a
//! measurement, and the interval's half-width is larger than the value's
//! distance to it.

use super::figure::Figure;
use super::precision::half_width;
use super::schema::{
    FigureInterval, IntervalMethod, Intervals, Measurement, ScenarioResult, ScenarioStatus,
};
use crate::figures::ProbeSheet;
use crate::stats::{batch_means, Estimate};

/// Repeats needed before their spread is used: with two, the t interval
/// has one degree of freedom and is uselessly wide.
pub const MIN_REPEATS: usize = 3;

/// Confidence level of the intervals written into runs.
pub const RUN_LEVEL: f64 = 0.95;

/// A scenario's figure with its uncertainty, when the data has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureEstimate {
    /// The figure of the scenario's outcome (the merge of its repeats).
    pub value: f64,
    /// Its uncertainty and how it was obtained; `None` when the data cannot
    /// say (one measurement without sub-windows, a figure not kept per
    /// sub-window).
    pub uncertainty: Option<(Estimate, IntervalMethod)>,
}

/// The estimate of `figure` in `scenario`; `None` when the scenario does
/// not have the figure.
pub fn estimate(scenario: &ScenarioResult, figure: &Figure) -> Option<FigureEstimate> {
    let value = figure.of(&scenario.outcome)?;
    let ok: Vec<&Measurement> = scenario
        .measurements()
        .iter()
        .filter(|m| m.status == ScenarioStatus::Ok)
        .collect();
    let from_repeats = || {
        let values: Vec<f64> = ok.iter().filter_map(|m| figure.of(m)).collect();
        (values.len() >= MIN_REPEATS && values.len() == ok.len())
            .then(|| Estimate::of_samples(&values))
            .flatten()
            .map(|e| (e.centred_on(value), IntervalMethod::Repeats))
    };
    let from_batches = || {
        let batches: Vec<Vec<f64>> = ok.iter().map(|m| figure.batch_values(m)).collect();
        batch_means::estimate(&batches).map(|e| (e.centred_on(value), IntervalMethod::BatchMeans))
    };
    Some(FigureEstimate {
        value,
        uncertainty: from_repeats().or_else(from_batches),
    })
}

/// The intervals of a scenario's headline figures (as `sheet` declares
/// them) at [`RUN_LEVEL`], cut to the values the figure can take; `None`
/// when none of them has an uncertainty. Figures whose uncertainty came
/// from another method than the first one's are left out, so one method
/// describes the whole record.
pub fn intervals(scenario: &ScenarioResult, sheet: &ProbeSheet) -> Option<Intervals> {
    let estimates: Vec<(Figure, Estimate, IntervalMethod)> = sheet
        .figures
        .iter()
        .filter(|def| def.headline)
        .filter_map(|def| {
            let figure = Figure::Probe(def.clone());
            let (e, method) = estimate(scenario, &figure)?.uncertainty?;
            Some((figure, e, method))
        })
        .collect();
    let method = estimates.first()?.2;
    let figures = estimates
        .into_iter()
        .filter(|(_, _, m)| *m == method)
        .map(|(figure, e, _)| {
            let (low, high) = figure.within_range(e.interval(RUN_LEVEL));
            FigureInterval {
                figure: figure.key(),
                value: e.value,
                low,
                high,
                se: e.se,
                df: e.df,
                samples: e.samples,
            }
        })
        .collect();
    Some(Intervals {
        method,
        level: RUN_LEVEL,
        figures,
    })
}

/// Which bounds of an interval were cut to the values its figure can take
/// (nothing below 0, no share above 100 %).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cut {
    /// The low bound is 0 (or the least the figure can be), not measured.
    pub low: bool,
    /// The high bound is the most the figure can be, not measured.
    pub high: bool,
}

impl Cut {
    /// The bounds of `shown` that differ from those of `computed`, the
    /// interval before it was cut.
    pub fn between(computed: (f64, f64), shown: (f64, f64)) -> Self {
        Self {
            low: shown.0 > computed.0,
            high: shown.1 < computed.1,
        }
    }

    /// The bounds of the stored `interval` (at `level`) that were cut: a
    /// low bound whose computed value is below 0 (no figure is), a high
    /// bound below its computed value.
    pub fn of(interval: &FigureInterval, level: f64) -> Self {
        let half = half_width(interval, level);
        // Relative slack for the stored bound's round trip through JSON.
        let slack = 1e-9 * (interval.value.abs() + half).max(1.0);
        Self {
            low: interval.value - half < 0.0,
            high: interval.high < interval.value + half - slack,
        }
    }

    /// Whether a bound was cut.
    pub fn any(self) -> bool {
        self.low || self.high
    }

    /// `low`–`high` (as shown, without the unit), a cut bound marked `≤`
    /// or `≥`: `≤0.000–0.201`, `74.6–≥100.0`.
    pub fn range(self, low: &str, high: &str) -> String {
        let mark = |cut: bool, sign: &'static str| if cut { sign } else { "" };
        format!(
            "{}{low}–{}{high}",
            mark(self.low, "≤"),
            mark(self.high, "≥")
        )
    }
}

/// What a `≤` or `≥` before a bound means, for legends.
pub const CUT_LEGEND: &str = "≤ or ≥ before a bound: the interval was cut there at the least or most the figure can be (0, 100 %); its half-width is larger than the value's distance to that limit, so the bound is a limit, not a measurement";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;
    use crate::figures::{ProbeSheet, Tally};
    use crate::measure::latency::LatencyHistogram;

    /// A sub-window of 10 frames of mean latency `mean_us`, 9 meeting their
    /// deadline, whose histogram was not kept (as in early version 1 runs).
    fn batch(mean_us: f64) -> Tally {
        let mut tally = Tally::default()
            .with_samples("latency", &LatencyHistogram::new(), (mean_us * 1e4) as u64)
            .with_count("measured_s", 0.1)
            .with_count("executed", 10.0)
            .with_count("periods", 10.0)
            .with_count("met", 9.0)
            .with_count("cpu_wanted_ms", 5.0)
            .with_count("cpu_received_ms", 5.0);
        tally.samples.get_mut("latency").unwrap().count = 10;
        tally
    }

    fn sheet() -> ProbeSheet {
        crate::probe::sheet_of("audio").unwrap()
    }

    fn mean() -> Figure {
        Figure::Probe(sheet().figure("mean").unwrap().clone())
    }

    fn with_batches(means: &[f64]) -> ScenarioResult {
        let mut scenario = fixture::run().scenarios[1].clone();
        let result = scenario.outcome.result.as_mut().unwrap();
        result.batches = means.iter().map(|&m| batch(m)).collect();
        scenario
    }

    #[test]
    fn one_measurement_without_batches_has_no_uncertainty() {
        let scenario = with_batches(&[]);
        let e = estimate(&scenario, &mean()).unwrap();
        assert!(e.uncertainty.is_none());
        assert!(intervals(&scenario, &sheet()).is_none());
    }

    #[test]
    fn batches_give_batch_means_centred_on_the_whole_figure() {
        let means: Vec<f64> = (0..20)
            .map(|i| 1000.0 + if i % 2 == 0 { 50.0 } else { -50.0 })
            .collect();
        let scenario = with_batches(&means);
        let whole = scenario.outcome.result.as_ref().unwrap().figures["latency_mean_us"];
        let e = estimate(&scenario, &mean()).unwrap();
        let (uncertainty, method) = e.uncertainty.unwrap();
        assert_eq!(method, IntervalMethod::BatchMeans);
        assert_eq!(uncertainty.value, whole);
        assert_eq!(uncertainty.samples, 20);
        let intervals = intervals(&scenario, &sheet()).unwrap();
        assert_eq!(intervals.method, IntervalMethod::BatchMeans);
        let keys: Vec<&str> = intervals
            .figures
            .iter()
            .map(|f| f.figure.as_str())
            .collect();
        // No sub-window histograms, so no p99 interval.
        assert_eq!(keys, ["mean", "deadlines"]);
        for f in &intervals.figures {
            assert!(f.low <= f.value && f.value <= f.high, "{f:?}");
        }
    }

    #[test]
    fn an_interval_cut_at_a_limit_says_which_bound() {
        // Sub-windows' means spread far wider than the whole mean (1.234
        // ms): the computed low bound is below 0 and cut to 0.
        let means: Vec<f64> = (0..20).map(|i| f64::from(i * 7 % 13) * 1000.0).collect();
        let scenario = with_batches(&means);
        let intervals = intervals(&scenario, &sheet()).unwrap();
        let mean = &intervals.figures[0];
        assert_eq!(mean.figure, "mean");
        assert_eq!(mean.low, 0.0);
        let cut = Cut::of(mean, intervals.level);
        assert_eq!(
            cut,
            Cut {
                low: true,
                high: false
            }
        );
        assert_eq!(cut.range("0.000", "0.401"), "≤0.000–0.401");
        // 90 % of deadlines met in every sub-window: no spread, nothing cut.
        let deadlines = &intervals.figures[1];
        assert_eq!(Cut::of(deadlines, intervals.level), Cut::default());
        assert_eq!(Cut::default().range("1", "2"), "1–2");
        let high = Cut::between((95.0, 101.0), (95.0, 100.0));
        assert_eq!(high.range("95.0", "100.0"), "95.0–≥100.0");
        assert!(high.any() && !Cut::between((1.0, 2.0), (1.0, 2.0)).any());
    }

    #[test]
    fn three_repeats_give_the_spread_across_repeats() {
        let one = fixture::run().scenarios[1].clone();
        let mut scenario = one.clone();
        scenario.repeats = (0..3)
            .map(|i| {
                let mut m = one.outcome.clone();
                let figures = &mut m.result.as_mut().unwrap().figures;
                *figures.get_mut("latency_mean_us").unwrap() += f64::from(i) * 10.0;
                m
            })
            .collect();
        let (e, method) = estimate(&scenario, &mean()).unwrap().uncertainty.unwrap();
        assert_eq!(method, IntervalMethod::Repeats);
        assert_eq!(e.df, 2.0);
        assert!((e.se - 10.0 / 3f64.sqrt()).abs() < 1e-9);
    }
}
