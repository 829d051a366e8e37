//! History built from scripted points: its kernel rows, the series it
//! refuses to mix, its annotations and its renderings.

use super::series::{self, choose};
use super::*;
use crate::store::query::{Annotation, Point, RunSummary};

fn point(run: usize, series: &str, kernel: &str, value: f64) -> Point {
    Point {
        series: series.into(),
        run_key: format!("run{run}@vm"),
        run_id: format!("run{run}"),
        hostname: "vm".into(),
        machine: "m1".into(),
        started: format!("2026-11-27T08:{run:02}:00Z"),
        started_unix: 1_795_766_400 + 60 * run as i64,
        kernel_release: kernel.into(),
        comment: (run == 1).then(|| "first".to_string()),
        suite: None,
        probe: "x".into(),
        load: "burn".into(),
        figure: "p99".into(),
        unit: "micros".into(),
        better: "lower".into(),
        value,
        ci_low: Some(value - 100.0),
        ci_high: Some(value + 100.0),
    }
}

fn summary(p: &Point) -> RunSummary {
    RunSummary {
        run_key: p.run_key.clone(),
        run_id: p.run_id.clone(),
        hostname: p.hostname.clone(),
        machine: p.machine.clone(),
        started: p.started.clone(),
        started_unix: p.started_unix,
        kernel_release: p.kernel_release.clone(),
        suite: None,
        suite_version: None,
        settings_hash: format!("settings-{}", p.series),
        series: p.series.clone(),
        comment: p.comment.clone(),
        interrupted: false,
        scenarios: 1,
        doc_sha256: String::new(),
    }
}

fn shown() -> Shown {
    Shown {
        figure: "p99".into(),
        label: "latency p99 (ms)".into(),
        unit: crate::figures::Unit::Micros,
        better: crate::figures::Better::Lower,
    }
}

/// Four runs of one series over two kernels, annotated at the third.
fn history(by: By) -> History {
    let points = vec![
        point(1, "s1", "6.1", 1000.0),
        point(2, "s1", "6.1", 3000.0),
        point(3, "s1", "6.12", 2000.0),
        point(4, "s1", "6.12", 2500.0),
    ];
    let runs: Vec<RunSummary> = points.iter().map(summary).collect();
    let annotations = [Annotation {
        run_key: "run3@vm".into(),
        series: None,
        machine: "m1".into(),
        note: "BIOS update".into(),
        added_unix: 0,
    }];
    let series = choose("x", &points, &runs, false).unwrap();
    History::build(&points, series, shown(), by, &annotations, &runs)
}

#[test]
fn kernels_keep_their_first_order_with_median_and_range() {
    let h = history(By::Kernel);
    let kernels: Vec<(&str, usize, f64, f64, f64)> = h
        .kernels
        .iter()
        .map(|k| (k.kernel.as_str(), k.runs, k.median, k.min, k.max))
        .collect();
    assert_eq!(
        kernels,
        [
            ("6.1", 2, 2000.0, 1000.0, 3000.0),
            ("6.12", 2, 2250.0, 2000.0, 2500.0)
        ]
    );
    assert_eq!(h.marks.len(), 1);
    assert_eq!(h.marks[0].kernel, "6.12");
}

#[test]
fn series_that_are_not_comparable_are_named_not_mixed() {
    let points = vec![
        point(1, "s1", "6.1", 1000.0),
        point(2, "s2", "6.1", 900.0),
        point(3, "s1", "6.1", 1100.0),
    ];
    let runs: Vec<RunSummary> = points.iter().map(summary).collect();
    let error = choose("x under burn p99", &points, &runs, false).unwrap_err();
    assert_eq!(error.series.len(), 2);
    assert_eq!((error.series[0].runs, error.series[1].runs), (2, 1));
    let message = error.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert!(
        message.contains("--series") && message.contains("settings-s2"),
        "{message}"
    );
    assert_eq!(choose("x", &points, &runs, true).unwrap().len(), 2);
    assert_eq!(series::series_of(&points[..1], &runs)[0].hosts, ["vm"]);
}

#[test]
fn the_table_and_csv_say_the_figure_and_each_run() {
    insta::assert_snapshot!("history_table_by_run", text::table(&history(By::Run)));
    insta::assert_snapshot!("history_table_by_kernel", text::table(&history(By::Kernel)));
    insta::assert_snapshot!("history_csv_by_run", text::csv(&history(By::Run)).unwrap());
}

#[test]
fn the_chart_and_page_draw_every_point_and_the_annotation() {
    for by in [By::Run, By::Kernel] {
        let h = history(by);
        let svg = chart::svg(&h).unwrap();
        assert!(svg.starts_with("<svg") && !svg.contains("NaN"), "{svg}");
        assert!(svg.matches("<circle").count() >= h.kernels.len(), "{svg}");
        assert!(svg.contains("BIOS update"), "{svg}");
        let page = chart::page(&h).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg"));
        assert!(page.contains("latency p99 (ms)") && page.contains("BIOS update"));
    }
}

#[test]
fn json_keeps_the_figure_beside_the_points() {
    let json = serde_json::to_value(history(By::Run)).unwrap();
    assert_eq!(json["figure"], "p99");
    assert_eq!(json["unit"], "micros");
    assert_eq!(json["points"].as_array().unwrap().len(), 4);
    assert_eq!(json["series"][0]["key"], "s1");
}

#[test]
fn a_change_of_method_versions_cuts_one_series_and_says_so() {
    // Runs of feelbench 0.1.0 (no versions), then two sets of versions.
    let points = vec![
        point(1, "b1", "6.1", 60.0),
        point(2, "b1", "6.1", 70.0),
        point(3, "b1-0000beef", "6.1", 2500.0),
        point(4, "b1-0000beef", "6.12", 2600.0),
        point(5, "b1-0000cafe", "6.12", 2700.0),
    ];
    let runs: Vec<RunSummary> = points.iter().map(summary).collect();
    let series = choose("x", &points, &runs, false).unwrap();
    assert_eq!(series.len(), 1);
    assert_eq!((series[0].key.as_str(), series[0].runs), ("b1", 5));
    assert!(
        series[0]
            .to_string()
            .ends_with("5 run(s), 3 sets of method versions)"),
        "{}",
        series[0]
    );
    let h = History::build(&points, series, shown(), By::Run, &[], &runs);
    let at: Vec<(&str, MarkKind)> = h
        .marks
        .iter()
        .map(|m| (m.run_key.as_str(), m.kind))
        .collect();
    assert_eq!(
        at,
        [("run3@vm", MarkKind::Method), ("run5@vm", MarkKind::Method)]
    );
    let table = text::table(&h);
    assert!(
        table.contains("new method versions from run run3@vm (6.1)"),
        "{table}"
    );
}
