//! Unit tests of the analysis on points made by hand: a step, noise, a cut.

use super::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

/// A point of run `i` (one an hour) of `series` with `value` of x/burn p99.
pub(super) fn point(series: &str, i: usize, value: f64) -> Point {
    Point {
        series: series.to_string(),
        run_key: format!("run-{i:02}@vm"),
        run_id: format!("run-{i:02}"),
        hostname: "vm".into(),
        machine: "m1".into(),
        started: format!("2026-11-27T{:02}:00:00Z", i % 24),
        started_unix: 1_800_000_000 + i as i64 * 3600,
        kernel_release: format!("6.18.{i}"),
        comment: None,
        suite: None,
        probe: "x".into(),
        load: "burn".into(),
        figure: "p99".into(),
        unit: "micros".into(),
        better: "lower".into(),
        value,
        ci_low: None,
        ci_high: None,
    }
}

/// `n` values around `mean` with a standard deviation of 2 % of it.
fn noise(n: usize, mean: f64, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let normal = Normal::new(mean, mean * 0.02).unwrap();
    (0..n).map(|_| normal.sample(&mut rng)).collect()
}

/// The points of `values`, run 0 first.
fn series(name: &str, values: &[f64]) -> Vec<Point> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| point(name, i, *v))
        .collect()
}

pub(super) const SETTINGS: Settings = Settings {
    min_effect_pct: 5.0,
    fdr: 0.05,
    store_option: None,
    any_series: false,
};

/// Runs 0–9 at 1 ms, 10–19 at 1.5 ms, exactly.
pub(super) fn analysis_of_step() -> Analysis {
    let values: Vec<f64> = (0..20)
        .map(|i| if i < 10 { 1000.0 } else { 1500.0 })
        .collect();
    analyse(&series("s1", &values), &[], &SETTINGS)
}

/// The lines of a rendering.
pub(super) fn table_lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn a_step_is_found_at_the_run_where_it_starts() {
    let mut values = noise(10, 1000.0, 1);
    values.extend(noise(10, 1300.0, 2));
    let analysis = analyse(&series("s1", &values), &[], &SETTINGS);
    assert_eq!(analysis.series, 1);
    assert_eq!(analysis.changes.len(), 1, "{analysis:?}");
    let change = &analysis.changes[0];
    assert_eq!(change.first_after.run_key, "run-10@vm");
    assert_eq!(change.last_before.run_key, "run-09@vm");
    assert_eq!((change.runs_before, change.runs_after), (10, 10));
    assert!(change.worse, "p99 is better lower and went up");
    let pct = change.change_pct.expect("a latency has a relative change");
    assert!(pct > 20.0 && pct < 40.0);
    assert!(change.q <= 0.05 && change.q >= change.p);
}

#[test]
fn a_higher_is_better_figure_that_rises_is_an_improvement() {
    let mut points = series("s1", &[[100.0; 8], [150.0; 8]].concat());
    for p in &mut points {
        p.better = "higher".into();
        p.unit = "fps".into();
    }
    let analysis = analyse(&points, &[], &SETTINGS);
    assert_eq!(analysis.changes.len(), 1);
    assert!(!analysis.changes[0].worse);
    assert_eq!(analysis.regressions().count(), 0);
}

#[test]
fn noise_alone_reports_nothing() {
    // 30 series of 20 runs of noise, corrected together.
    let points: Vec<Point> = (0..30)
        .flat_map(|s| series(&format!("s{s}"), &noise(20, 1000.0, 100 + s)))
        .collect();
    let analysis = analyse(&points, &[], &SETTINGS);
    assert_eq!(analysis.series, 30);
    assert!(analysis.tests >= 30, "each series is tested at least once");
    assert!(analysis.changes.is_empty(), "{:?}", analysis.changes);
}

#[test]
fn a_change_below_the_minimum_effect_is_left_out() {
    let values: Vec<f64> = (0..20)
        .map(|i| if i < 10 { 1000.0 } else { 1030.0 })
        .collect();
    let analysis = analyse(&series("s1", &values), &[], &SETTINGS);
    assert!(analysis.changes.is_empty());
    assert_eq!(analysis.too_small, 1, "significant but 3 % < 5 %");
    let lenient = Settings {
        min_effect_pct: 2.0,
        ..SETTINGS
    };
    assert_eq!(
        analyse(&series("s1", &values), &[], &lenient).changes.len(),
        1
    );
}

#[test]
fn a_change_smaller_than_the_shown_step_is_left_out() {
    // 0.4 µs to 0.6 µs is +50 %, but both show as 0.000 ms.
    let values: Vec<f64> = (0..20).map(|i| if i < 10 { 0.4 } else { 0.6 }).collect();
    let analysis = analyse(&series("s1", &values), &[], &SETTINGS);
    assert!(analysis.changes.is_empty());
    assert_eq!(analysis.too_small, 1);
}

#[test]
fn an_annotation_cuts_the_series_where_the_step_is() {
    let values: Vec<f64> = (0..20)
        .map(|i| if i < 10 { 1000.0 } else { 1500.0 })
        .collect();
    let points = series("s1", &values);
    let cut = Cut {
        series: None,
        machine: "m1".into(),
        run_key: "run-10@vm".into(),
        started_unix: points[10].started_unix,
    };
    let analysis = analyse(&points, std::slice::from_ref(&cut), &SETTINGS);
    assert_eq!(analysis.parts, 2);
    assert!(analysis.changes.is_empty(), "{:?}", analysis.changes);
    // A cut of another series or machine leaves this one whole.
    for other in [
        Cut {
            series: Some("s2".into()),
            ..cut.clone()
        },
        Cut {
            machine: "m2".into(),
            ..cut.clone()
        },
    ] {
        let analysis = analyse(&points, &[other], &SETTINGS);
        assert_eq!((analysis.parts, analysis.changes.len()), (1, 1));
    }
}

#[test]
fn series_are_never_mixed() {
    // Two flat series at different levels, interleaved in time: no change.
    let mut points = series("s1", &[1000.0; 12]);
    points.extend(series("s2", &[2000.0; 12]));
    points.sort_by_key(|p| p.started_unix);
    let analysis = analyse(&points, &[], &SETTINGS);
    assert_eq!(analysis.series, 2);
    assert!(analysis.changes.is_empty());
}

#[test]
fn the_check_names_the_store_when_one_was_given() {
    let values: Vec<f64> = (0..20)
        .map(|i| if i < 10 { 1000.0 } else { 1500.0 })
        .collect();
    let settings = Settings {
        store_option: Some("/tmp/my store.sqlite".into()),
        ..SETTINGS
    };
    let analysis = analyse(&series("s1", &values), &[], &settings);
    assert_eq!(
        analysis.changes[0].check,
        "feelbench compare run-09@vm run-10@vm --figure p99 --store '/tmp/my store.sqlite'"
    );
}

#[test]
fn a_change_of_method_versions_cuts_the_series_and_is_never_a_change() {
    // The runs of feelbench 0.1.0 (no versions), then runs of a method
    // that measures 1.5 times as much: one series cut where it changed.
    let values: Vec<f64> = (0..20)
        .map(|i| if i < 10 { 1000.0 } else { 1500.0 })
        .collect();
    let mut points = series("s1", &values);
    for p in &mut points[10..] {
        p.series = "s1-0000beef".into();
    }
    let analysis = analyse(&points, &[], &SETTINGS);
    assert_eq!(
        (analysis.series, analysis.parts, analysis.method_cuts),
        (1, 2, 1)
    );
    assert!(analysis.changes.is_empty(), "{analysis:?}");
    let text = render::table(&analysis);
    assert!(
        text.contains("(2 part(s) once annotations and 1 change(s) of method version cut them)"),
        "{text}"
    );
}

/// `values` as points of a figure of `unit`, better lower.
fn of_unit(unit: &str, values: &[f64]) -> Vec<Point> {
    let mut points = series("s1", values);
    for p in &mut points {
        p.unit = unit.into();
    }
    points
}

#[test]
fn a_change_from_a_level_of_0_is_judged_in_the_figures_unit() {
    // A share of deadlines missed: 0 % for ten runs, then 3 %. A ratio to
    // 0 is infinite; 3 percentage points is less than the 5 points asked.
    let values: Vec<f64> = (0..20).map(|i| if i < 10 { 0.0 } else { 3.0 }).collect();
    let analysis = analyse(&of_unit("percent", &values), &[], &SETTINGS);
    assert!(analysis.changes.is_empty(), "{:?}", analysis.changes);
    assert_eq!(analysis.too_small, 1);
    // 0 % to 8 % is reported, as points, with no ratio.
    let values: Vec<f64> = (0..20).map(|i| if i < 10 { 0.0 } else { 8.0 }).collect();
    let analysis = analyse(&of_unit("percent", &values), &[], &SETTINGS);
    let change = &analysis.changes[0];
    assert_eq!((change.change_pct, change.difference), (None, 8.0));
    let text = render::table(&analysis);
    assert!(text.contains("+8.0 pt"), "{text}");
    assert!(!text.contains("inf"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&render::json(&analysis)).unwrap();
    assert_eq!(json["changes"][0]["change_pct"], serde_json::Value::Null);
}

#[test]
fn a_signed_figure_near_0_is_judged_in_its_unit() {
    // A performance index (1 = as expected) from +0.01 to -0.01: -200 %
    // of the level before, but 0.02 of a scale of 1, below 5 % of it.
    let mut values = noise(10, 1.0, 7);
    values.extend(noise(10, 1.0, 8));
    let values: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (v - 1.0) * 0.05 + if i < 10 { 0.01 } else { -0.01 })
        .collect();
    let analysis = analyse(&of_unit("ratio", &values), &[], &SETTINGS);
    assert!(analysis.changes.is_empty(), "{:?}", analysis.changes);
    // A slack in µs from +200 to -200 (mean magnitude 200): a change of
    // 400 µs is reported in µs.
    let values: Vec<f64> = (0..20)
        .map(|i| if i < 10 { 200.0 } else { -200.0 })
        .collect();
    let analysis = analyse(&of_unit("micros", &values), &[], &SETTINGS);
    let change = &analysis.changes[0];
    assert_eq!(change.change_pct, None);
    assert!(render::table(&analysis).contains("-0.400 ms"));
}

#[test]
fn the_effect_is_relative_only_on_a_positive_scale() {
    assert_eq!(
        Effect::of(&[1.0, 2.0], Some(Unit::Micros), 5.0),
        Effect::Relative(5.0)
    );
    assert_eq!(
        Effect::of(&[0.0, 2.0], Some(Unit::Percent), 5.0),
        Effect::Absolute(5.0)
    );
    assert_eq!(
        Effect::of(&[-0.5, 0.5], Some(Unit::Ratio), 5.0),
        Effect::Absolute(0.05)
    );
    assert_eq!(
        Effect::of(&[-100.0, 300.0], Some(Unit::Micros), 5.0),
        Effect::Absolute(10.0)
    );
    assert!(Effect::Relative(5.0).reached(100.0, 105.0));
    assert!(!Effect::Relative(5.0).reached(100.0, 104.0));
    assert!(Effect::Absolute(5.0).reached(0.0, -5.0));
}
