//! What the probes that answer after an idle gap share (resp1's method):
//! the loop "leave the machine alone for the gap, then time one response",
//! repeated for the run's number of points, and the figures resp1 reports
//! of the delays: low, high, median, average, S.D., and the "1sdavg" (the
//! mean of the points within one S.D. of the median), with the average
//! and the 1sdavg also as ratios to the same probe under no load.
//!
//! Each point is one sample of the delay distribution, so repeats and runs
//! merge as every tally does; each point is also a sub-window of its own
//! (its gap and its response), so one measurement of five points or more
//! has batch means, and a confidence interval, for its average.
//!
//! A scenario of these probes lasts as long as its points take
//! ([`crate::probe::Pace::OwnWork`]): its window is long enough for every
//! point to take [`RESPONSE_ALLOWANCE_NS`], and a point whose gap and
//! allowance no longer fit in what is left of it is not begun; the points
//! cut that way are counted (`points_cut`).
//!
//! A probe may have its points split into the causes of their delay
//! (`late_split`): each is due at the end of its gap, and late when it is
//! done more than [`LATE_AFTER_NS`] after that.

use super::late_split::{threshold_rule, LateSplit};
use super::MeasureError;
use crate::figures::result::MEASURED_S;
use crate::figures::LateCauses;
use crate::figures::{
    Better, Column, FigureDef, Formula, Measured, Noticeable, OverviewRole, ProbeSheet, Spread,
    Tally, Unit,
};
use crate::measure::clock::sleep_until_ns;
use crate::measure::late::EventTimes;
use crate::measure::latency::LatencyHistogram;
use crate::measure::window::Window;
use crate::sim::{ResponseParams, WorkParams};

/// The delays, one per point.
const DELAY: &str = "delay";
/// Points not begun because the window's cap was near.
const CUT: &str = "points_cut";

/// The longest one response is allowed to take: a point begins only when
/// its gap and this much still fit in the window. resp1 saw responses of
/// up to 40 s under its memory loads.
pub const RESPONSE_ALLOWANCE_NS: u64 = 60_000_000_000;
/// How long after its gap a response may end before it is late: 100 ms,
/// the limit under which a response feels immediate (Card, Moran and
/// Newell's perceptual cycle; Nielsen's 0.1 s), and twice what the
/// `response` probe's largest default arrays take on an idle 2-core VM
/// (see `sim::response`).
pub const LATE_AFTER_NS: u64 = 100_000_000;
/// About what one response takes on an idle machine, for the progress bar.
const EXPECTED_RESPONSE_NS: u64 = 100_000_000;

/// How long the points take on an idle machine.
pub fn expected_ns(params: &WorkParams) -> u64 {
    let response = &params.response;
    u64::from(response.points) * (response.gap_ns + EXPECTED_RESPONSE_NS)
}

/// The longest the points may take: each with its full allowance.
pub fn cap_ns(params: &WorkParams) -> u64 {
    let response = &params.response;
    u64::from(response.points) * (response.gap_ns + RESPONSE_ALLOWANCE_NS)
}

/// The interaction a probe times after each idle gap.
pub trait Response {
    /// Readies the next point, before its gap begins (a cold start drops
    /// the page cache here); nothing by default.
    fn before_gap(&mut self) -> Result<(), MeasureError> {
        Ok(())
    }

    /// Does the interaction whose delay is measured.
    fn respond(&mut self) -> Result<(), MeasureError>;
}

/// One point: when its gap began, and how long the response took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Point {
    idle_from_ns: u64,
    response_started_ns: u64,
    response_ended_ns: u64,
}

/// Measures `params.points` points of `response` in `window`: each one
/// sleeps through the gap from the end of the one before (the first from
/// the window's start), then times one response; splits each point into
/// `late` (on the calling thread, which responds).
pub fn measure_points(
    window: Window,
    params: &ResponseParams,
    response: &mut dyn Response,
    late: LateSplit,
) -> Result<Measured, MeasureError> {
    let mut splitting = late.open(window);
    let mut points = Vec::with_capacity(params.points as usize);
    let mut idle_from_ns = window.start_ns;
    sleep_until_ns(window.start_ns);
    for _ in 0..params.points {
        if idle_from_ns + params.gap_ns + RESPONSE_ALLOWANCE_NS > window.end_ns {
            break;
        }
        response.before_gap()?;
        let due_ns = idle_from_ns + params.gap_ns;
        sleep_until_ns(due_ns);
        let response_started_ns = splitting.woke();
        response.respond()?;
        let times = EventTimes {
            due_ns,
            cpu_wanted_ns: None,
        };
        let response_ended_ns = splitting.ended_by(times, due_ns + LATE_AFTER_NS);
        points.push(Point {
            idle_from_ns,
            response_started_ns,
            response_ended_ns,
        });
        idle_from_ns = response_ended_ns;
    }
    let rule = threshold_rule("a response", LATE_AFTER_NS);
    Ok(Measured {
        late: LateCauses::of_splitting(&splitting, &rule),
        ..point_tallies(&points, params.points, window)
    })
}

/// The tallies of `points` measured in `window` out of `wanted`: the whole
/// measurement (from the window's start to the last response's end), and
/// one sub-window per point (its gap and its response).
fn point_tallies(points: &[Point], wanted: u32, window: Window) -> Measured {
    let delay_ns = |p: &Point| p.response_ended_ns - p.response_started_ns;
    let seconds = |from_ns: u64, to_ns: u64| to_ns.saturating_sub(from_ns) as f64 / 1e9;
    let delays = |points: &[Point]| {
        let mut histogram = LatencyHistogram::new();
        points.iter().for_each(|p| histogram.record_ns(delay_ns(p)));
        let sum_ns = points.iter().map(delay_ns).sum();
        (histogram, sum_ns)
    };
    let (histogram, sum_ns) = delays(points);
    let ended_ns = points
        .last()
        .map_or(window.start_ns, |p| p.response_ended_ns);
    let cut = wanted.saturating_sub(points.len() as u32);
    let tally = Tally::default()
        .with_samples(DELAY, &histogram, sum_ns)
        .with_count(MEASURED_S, seconds(window.start_ns, ended_ns))
        .with_count(CUT, f64::from(cut));
    let batches = points
        .iter()
        .map(|point| {
            let (histogram, sum_ns) = delays(std::slice::from_ref(point));
            Tally::default()
                .with_samples(DELAY, &histogram, sum_ns)
                .with_count(
                    MEASURED_S,
                    seconds(point.idle_from_ns, point.response_ended_ns),
                )
                .with_count(CUT, 0.0)
        })
        .collect();
    Measured::of(tally, batches)
}

/// resp1's figures of the delays, and its table: low, high, median,
/// average, S.D., the ratios of the average and of the 1sdavg to the same
/// probe's under no load, and the points measured.
pub fn sheet(summary: &str, _params: Option<&WorkParams>) -> ProbeSheet {
    let samples = || DELAY.to_string();
    let delay = |key: &str, label: &str, formula: Formula| {
        let field = format!("delay_{key}_us");
        FigureDef::new(key, &field, label, Unit::Micros, Better::Lower, formula)
    };
    let figures = vec![
        FigureDef::new(
            "points",
            "points",
            "points measured",
            Unit::Count,
            Better::Higher,
            Formula::SampleCount { samples: samples() },
        ),
        FigureDef::new(
            "cut",
            "points_cut",
            "points cut by the time cap",
            Unit::Count,
            Better::Lower,
            Formula::Total {
                count: CUT.to_string(),
            },
        ),
        delay("min", "delay low (ms)", Formula::Min { samples: samples() }),
        delay(
            "max",
            "delay high (ms)",
            Formula::Max { samples: samples() },
        ),
        delay(
            "median",
            "delay median (ms)",
            Formula::Quantile {
                samples: samples(),
                q: 0.5,
            },
        )
        .compared(),
        delay(
            "mean",
            "delay average (ms)",
            Formula::Mean { samples: samples() },
        )
        .spread(Spread::SubWindows)
        .headline()
        .compared(),
        delay("sd", "delay S.D. (ms)", Formula::Sd { samples: samples() }),
        delay(
            "avg1sd",
            "delay 1sdavg (ms)",
            Formula::MeanNearMedian { samples: samples() },
        )
        .compared(),
    ];
    let columns = vec![
        Column::new("Low", &["min"], 10),
        Column::new("High", &["max"], 10),
        Column::new("Median", &["median"], 10),
        Column::new("Average", &["mean"], 10),
        Column::new("S.D.", &["sd"], 10),
        Column::ratio_to_none("Ratio avg", "mean", 9),
        Column::ratio_to_none("Ratio 1sd", "avg1sd", 9),
        Column::new("Pts", &["points"], 4),
    ];
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures,
    }
    .with_overview("mean", OverviewRole::ratio("later"))
    .with_noticeable(
        "max",
        Noticeable::new(
            100_000.0,
            1_000_000.0,
            "the slowest response against the limits people perceive: past 0.1 s it no longer \
             feels instantaneous, past 1 s it interrupts the flow of thought (Card, Robertson \
             and Mackinlay 1991, Nielsen 1993; Web Vitals band a page's interaction latency at \
             200 and 500 ms)",
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::ProbeResult;
    use crate::measure::clock::now_ns;
    use crate::measure::sched::SchedApplied;

    const MS: u64 = 1_000_000;

    const WINDOW: Window = Window::ms(1_000, 400_000);

    /// Points after 20 s gaps whose responses took `delays_ms`.
    fn scripted(delays_ms: &[u64]) -> Vec<Point> {
        let mut idle_from_ns = WINDOW.start_ns;
        delays_ms
            .iter()
            .map(|&ms| {
                let response_started_ns = idle_from_ns + 20_000 * MS;
                let point = Point {
                    idle_from_ns,
                    response_started_ns,
                    response_ended_ns: response_started_ns + ms * MS,
                };
                idle_from_ns = point.response_ended_ns;
                point
            })
            .collect()
    }

    fn result(points: &[Point], wanted: u32) -> ProbeResult {
        let measured = point_tallies(points, wanted, WINDOW);
        ProbeResult::new(
            &sheet("scripted", None),
            measured.tally,
            measured.batches,
            SchedApplied::for_tests(),
        )
    }

    fn close(value: f64, expected: f64) -> bool {
        (value - expected).abs() <= expected.abs() * 0.001 + 1e-9
    }

    #[test]
    fn the_figures_are_resp1s() {
        let r = result(&scripted(&[100, 110, 120, 130, 1000]), 5);
        let f = |field: &str| r.figures[field];
        assert_eq!(f("points"), 5.0);
        assert_eq!(f("points_cut"), 0.0);
        assert!(close(f("delay_min_us"), 100_000.0), "{}", f("delay_min_us"));
        assert!(close(f("delay_max_us"), 1_000_000.0));
        assert!(close(f("delay_median_us"), 120_000.0));
        assert_eq!(f("delay_mean_us"), 292_000.0);
        assert!(close(f("delay_sd_us"), 354_140.0));
        assert!(close(f("delay_avg1sd_us"), 115_000.0));
        // Five gaps of 20 s and 1.46 s of responses.
        assert!(close(r.measured_s(), 101.46));
    }

    #[test]
    fn each_point_is_a_sub_window_so_the_average_has_batch_means() {
        let r = result(&scripted(&[100, 110, 120, 130, 1000]), 5);
        assert_eq!(r.batches.len(), 5);
        let mean = sheet("scripted", None).figure("mean").unwrap().clone();
        let values: Vec<f64> = r.batch_values(&mean);
        assert_eq!(
            values,
            [100_000.0, 110_000.0, 120_000.0, 130_000.0, 1_000_000.0]
        );
        let spans: f64 = r.batches.iter().map(|b| b.count(MEASURED_S)).sum();
        assert!(close(spans, r.measured_s()));
        // The 1sdavg is not estimated from single points.
        let avg1sd = sheet("scripted", None).figure("avg1sd").unwrap().clone();
        assert!(r.batch_values(&avg1sd).is_empty());
    }

    #[test]
    fn points_cut_by_the_cap_are_counted_and_none_measured_means_no_delay() {
        let r = result(&scripted(&[100, 200]), 5);
        assert_eq!((r.figures["points"], r.figures["points_cut"]), (2.0, 3.0));
        let none = result(&[], 5);
        assert_eq!(none.figures["points"], 0.0);
        assert_eq!(none.figures["points_cut"], 5.0);
        assert!(!none.figures.contains_key("delay_mean_us"));
        assert!(!none.figures.contains_key("delay_avg1sd_us"));
        assert!(none.batches.is_empty());
    }

    #[test]
    fn the_ratio_columns_are_of_the_average_and_the_1sdavg() {
        let sheet = sheet("s", None);
        let ratios: Vec<&str> = sheet
            .columns
            .iter()
            .filter(|c| c.ratio_to_none)
            .map(|c| c.figures[0].as_str())
            .collect();
        assert_eq!(ratios, ["mean", "avg1sd"]);
    }

    /// Counts its calls; fails at the call `fail_at` when given.
    struct Scripted {
        prepared: u32,
        responded: u32,
        fail_at: Option<u32>,
    }

    impl Response for Scripted {
        fn before_gap(&mut self) -> Result<(), MeasureError> {
            self.prepared += 1;
            Ok(())
        }

        fn respond(&mut self) -> Result<(), MeasureError> {
            self.responded += 1;
            match self.fail_at {
                Some(n) if n == self.responded => Err(MeasureError::Io {
                    what: "scripted failure",
                    error: std::io::Error::other("no"),
                }),
                _ => Ok(()),
            }
        }
    }

    fn params() -> WorkParams {
        WorkParams {
            response: ResponseParams {
                gap_ns: MS,
                points: 3,
                ..ResponseParams::for_tests()
            },
            ..WorkParams::for_tests()
        }
    }

    fn window_of(length_ns: u64) -> Window {
        let start_ns = now_ns();
        Window {
            start_ns,
            end_ns: start_ns + length_ns,
        }
    }

    /// A scripted response failing at point `fail_at`, if any.
    fn response_failing_at(fail_at: Option<u32>) -> Scripted {
        Scripted {
            prepared: 0,
            responded: 0,
            fail_at,
        }
    }

    /// `response`'s points measured in a window `length_ns` long, split.
    fn measure_scripted(response: &mut Scripted, length_ns: u64) -> Result<Measured, MeasureError> {
        let params = params();
        let late = LateSplit::new(&params);
        measure_points(window_of(length_ns), &params.response, response, late)
    }

    #[test]
    fn the_loop_readies_and_times_every_point_within_the_cap() {
        let params = params();
        let mut response = response_failing_at(None);
        let measured = measure_scripted(&mut response, cap_ns(&params)).unwrap();
        assert_eq!((response.prepared, response.responded), (3, 3));
        assert_eq!(measured.tally.samples[DELAY].count, 3);
        assert_eq!(measured.batches.len(), 3);
        assert!(expected_ns(&params) < cap_ns(&params));
        let late = measured.late.expect("every point is split");
        assert_eq!(late.events(), 3);
        assert!(late.late() <= 3);
        assert_eq!(
            late.rule,
            "a response done more than 100ms after it was due"
        );
    }

    #[test]
    fn the_loop_begins_no_point_that_would_outlast_the_window() {
        let mut response = response_failing_at(None);
        let measured = measure_scripted(&mut response, RESPONSE_ALLOWANCE_NS).unwrap();
        assert_eq!(response.responded, 0);
        assert_eq!(measured.tally.count(CUT), 3.0);
    }

    #[test]
    fn a_failed_response_fails_the_measurement() {
        let mut response = response_failing_at(Some(2));
        let error = measure_scripted(&mut response, cap_ns(&params())).unwrap_err();
        assert_eq!(error.to_string(), "scripted failure: no");
        assert_eq!(response.responded, 2);
    }
}
