//! When a scenario has been measured precisely enough (`run --precision
//! PCT`): every headline figure its probe declares has a confidence interval
//! (the one the run stores, from [`super::estimate`]) whose half-width is
//! within the goal for the figure's unit:
//!
//! - a share in % (deadlines met, desired CPU): at most PCT percentage points;
//! - any other unit (latencies, FPS, rates): at most PCT % of the figure's
//!   value, or the smallest step the table shows in that unit, whichever is
//!   larger, so a figure of 0 (or next to it) is judged by an absolute floor
//!   instead of a relative width that means nothing there.
//!
//! A headline figure without an interval (a p99 with too few frames for
//! batch means) is not precise yet: more measuring may give it one.

use super::schema::{FigureInterval, ScenarioResult, ScenarioStatus};
use crate::figures::{FigureDef, ProbeSheet, Unit};
use crate::stats::t_quantile;

/// How a headline figure stands against the goal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FigurePrecision {
    /// Its interval is narrow enough.
    Within,
    /// Its interval's half-width is above what the goal allows (both in the
    /// figure's stored unit).
    TooWide { half_width: f64, allowed: f64 },
    /// It has no interval yet.
    NoInterval,
}

/// The half-width a figure of `unit` whose value is `value` may have for a
/// goal of `pct` (in the stored unit: µs for latencies, points for shares).
pub fn allowed_half_width(unit: Unit, value: f64, pct: f64) -> f64 {
    match unit {
        Unit::Percent => pct,
        _ => (value.abs() * pct / 100.0).max(floor(unit)),
    }
}

/// The smallest step the table shows of a figure of `unit`, in the stored
/// unit: the absolute half-width enough for a figure of value 0.
fn floor(unit: Unit) -> f64 {
    unit.step_at(0.0)
}

/// Half the width of `interval`, a two-sided interval at `level`, before it
/// was cut to the values the figure can take.
pub fn half_width(interval: &FigureInterval, level: f64) -> f64 {
    if interval.se == 0.0 {
        return 0.0;
    }
    t_quantile(0.5 + level / 2.0, interval.df) * interval.se
}

/// How the figure `def`, with `interval` (at `level`) when it has one,
/// stands against a goal of `pct`.
pub fn figure_precision(
    def: &FigureDef,
    interval: Option<&FigureInterval>,
    level: f64,
    pct: f64,
) -> FigurePrecision {
    let Some(interval) = interval else {
        return FigurePrecision::NoInterval;
    };
    let half_width = half_width(interval, level);
    let allowed = allowed_half_width(def.unit, interval.value, pct);
    if half_width <= allowed {
        FigurePrecision::Within
    } else {
        FigurePrecision::TooWide {
            half_width,
            allowed,
        }
    }
}

/// Keys of the headline figures of `scenario` (as `sheet` declares them)
/// that are not yet within a goal of `pct`, in the sheet's order; every
/// headline figure when the scenario has no result.
pub fn imprecise_figures(scenario: &ScenarioResult, sheet: &ProbeSheet, pct: f64) -> Vec<String> {
    let ok = scenario.outcome.status == ScenarioStatus::Ok;
    let intervals = scenario.intervals.as_ref().filter(|_| ok);
    sheet
        .figures
        .iter()
        .filter(|def| def.headline)
        .filter(|def| {
            let (interval, level) = match intervals {
                Some(i) => (i.figures.iter().find(|f| f.figure == def.key), i.level),
                None => (None, 0.0),
            };
            figure_precision(def, interval, level, pct) != FigurePrecision::Within
        })
        .map(|def| def.key.clone())
        .collect()
}

/// Whether every headline figure of `scenario` is within a goal of `pct`.
pub fn is_precise(scenario: &ScenarioResult, sheet: &ProbeSheet, pct: f64) -> bool {
    imprecise_figures(scenario, sheet, pct).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;
    use crate::document::schema::{IntervalMethod, Intervals};

    fn sheet() -> ProbeSheet {
        crate::probe::sheet_of("audio").unwrap()
    }

    fn def(key: &str) -> FigureDef {
        sheet().figure(key).unwrap().clone()
    }

    /// An interval of `key` around `value` whose 95 % half-width is
    /// `half_width`, from 20 samples.
    fn interval(key: &str, value: f64, half_width: f64) -> FigureInterval {
        let se = half_width / t_quantile(0.975, 19.0);
        FigureInterval {
            figure: key.into(),
            value,
            low: value - half_width,
            high: value + half_width,
            se,
            df: 19.0,
            samples: 20,
        }
    }

    fn judge(key: &str, value: f64, half: f64, pct: f64) -> FigurePrecision {
        figure_precision(&def(key), Some(&interval(key, value, half)), 0.95, pct)
    }

    #[test]
    fn latencies_are_judged_relative_to_their_value() {
        assert_eq!(judge("mean", 1000.0, 49.0, 5.0), FigurePrecision::Within);
        let FigurePrecision::TooWide {
            half_width,
            allowed,
        } = judge("mean", 1000.0, 51.0, 5.0)
        else {
            panic!("too wide");
        };
        assert!((half_width - 51.0).abs() < 1e-9);
        assert!((allowed - 50.0).abs() < 1e-9);
    }

    #[test]
    fn shares_are_judged_in_points() {
        assert_eq!(judge("deadlines", 40.0, 4.9, 5.0), FigurePrecision::Within);
        assert_eq!(judge("deadlines", 99.0, 4.9, 5.0), FigurePrecision::Within);
        // 5.1 points is under 5 % of 99 % relatively, but over 5 points.
        assert!(matches!(
            judge("deadlines", 99.0, 5.1, 5.0),
            FigurePrecision::TooWide { .. }
        ));
    }

    #[test]
    fn a_zero_value_needs_an_absolute_half_width_under_the_floor() {
        assert_eq!(allowed_half_width(Unit::Micros, 0.0, 5.0), 1.0);
        assert_eq!(judge("mean", 0.0, 0.9, 5.0), FigurePrecision::Within);
        assert!(matches!(
            judge("mean", 0.0, 1.1, 5.0),
            FigurePrecision::TooWide { .. }
        ));
        assert_eq!(judge("mean", 0.0, 0.0, 5.0), FigurePrecision::Within);
    }

    #[test]
    fn a_missing_interval_is_not_precise_yet() {
        let p99 = def("p99");
        assert_eq!(
            figure_precision(&p99, None, 0.95, 50.0),
            FigurePrecision::NoInterval
        );
    }

    #[test]
    fn a_scenario_is_precise_when_every_headline_figure_is() {
        let mut scenario = fixture::run().scenarios[0].clone();
        assert_eq!(
            imprecise_figures(&scenario, &sheet(), 5.0),
            ["mean", "p99", "deadlines"]
        );
        let mut intervals = Intervals {
            method: IntervalMethod::Repeats,
            level: 0.95,
            figures: vec![
                interval("mean", 50.0, 2.0),
                interval("deadlines", 90.0, 1.0),
            ],
        };
        scenario.intervals = Some(intervals.clone());
        assert_eq!(imprecise_figures(&scenario, &sheet(), 5.0), ["p99"]);
        intervals.figures.push(interval("p99", 300.0, 30.0));
        scenario.intervals = Some(intervals);
        assert_eq!(imprecise_figures(&scenario, &sheet(), 5.0), ["p99"]);
        assert!(is_precise(&scenario, &sheet(), 10.0));
        let failed = &fixture::run().scenarios[3];
        assert!(!is_precise(failed, &sheet(), 100.0));
    }
}
