use super::*;

use crate::system::counters::{CpuTicks, StatCounters};
use crate::system::telemetry::{ScenarioTelemetry, TelemetrySample};

#[test]
fn a_long_load_name_uses_the_first_columns_padding_or_its_own_line() {
    let line = "               4.908  x\n";
    assert_eq!(
        with_name("ioseqwrite", line).unwrap(),
        "ioseqwrite     4.908  x\n"
    );
    assert_eq!(
        with_name("none", line).unwrap(),
        "none           4.908  x\n"
    );
    assert_eq!(with_name("burn+write+read", line), None);
}

#[test]
fn intervals_are_shown_under_the_row_and_explained_once() {
    use crate::document::schema::{FigureInterval, Intervals};
    let mut run = crate::document::fixture::run();
    run.scenarios[0].intervals = Some(Intervals {
        method: IntervalMethod::BatchMeans,
        level: 0.95,
        figures: vec![
            FigureInterval {
                figure: "mean".into(),
                value: 52.0,
                low: 50.0,
                high: 54.6,
                se: 1.0,
                df: 19.0,
                samples: 20,
            },
            FigureInterval {
                figure: "deadlines".into(),
                value: 90.0,
                low: 88.25,
                high: 91.75,
                se: 0.8,
                df: 19.0,
                samples: 20,
            },
        ],
    });
    let sheet = run.sheet(&run.scenarios[0].probe).unwrap();
    let row = render_row(&run.scenarios[0], sheet, &run.settings, None);
    assert!(
        row.ends_with(
            "\n          95% CI mean 0.050–0.055 ms, deadlines 88.2–91.8 % (batch means)\n"
        ),
        "{row}"
    );
    let text = render(&run, false);
    assert_eq!(text.matches("batch means:").count(), 1, "{text}");
    assert!(!render(&crate::document::fixture::run(), false).contains("CI"));
}

#[test]
fn a_bound_cut_at_a_limit_is_marked_in_every_rendering() {
    use crate::document::schema::{FigureInterval, Intervals};
    let mut run = crate::document::fixture::run();
    let interval = |figure: &str, value: f64, se: f64, low: f64, high: f64| FigureInterval {
        figure: figure.into(),
        value,
        low,
        high,
        se,
        df: 19.0,
        samples: 20,
    };
    // t(0.975, 19) = 2.093: mean 52 ± 62.8 µs is cut at 0, deadlines
    // 99.0 ± 2.1 % at 100.
    run.scenarios[0].intervals = Some(Intervals {
        method: IntervalMethod::BatchMeans,
        level: 0.95,
        figures: vec![
            interval("mean", 52.0, 30.0, 0.0, 114.8),
            interval("deadlines", 99.0, 1.0, 96.9, 100.0),
        ],
    });
    let marked = "95% CI mean ≤0.000–0.115 ms, deadlines 96.9–≥100.0 %";
    let console = render(&run, false);
    assert!(console.contains(marked), "{console}");
    assert!(console.contains(CUT_LEGEND), "{console}");
    let markdown = crate::report::markdown::render(&run);
    assert!(
        markdown.contains(&format!("- none: {marked} (batch means)")),
        "{markdown}"
    );
    assert!(markdown.contains(CUT_LEGEND), "{markdown}");
    let html = crate::report::html::render(&run).unwrap();
    assert!(html.contains(marked), "{html}");
    // The CSV field `column` of the first scenario.
    let csv_field = |run: &RunDocument, column: &str| {
        let csv = crate::report::csv::render(run);
        let mut lines = csv
            .lines()
            .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
        let header = lines.next().unwrap();
        let at = header.iter().position(|h| h == column).unwrap();
        lines.next().unwrap()[at].clone()
    };
    assert_eq!(csv_field(&run, "latency_mean_us_ci_low"), "0");
    assert_eq!(csv_field(&run, "latency_mean_us_ci_cut"), "low");
    assert_eq!(csv_field(&run, "deadlines_met_pct_ci_cut"), "high");
    assert_eq!(csv_field(&run, "ci_method"), "batch_means");
    // Not cut: no mark, and no legend.
    run.scenarios[0].intervals.as_mut().unwrap().figures =
        vec![interval("mean", 52.0, 1.0, 49.9, 54.1)];
    let console = render(&run, false);
    assert!(
        console.contains("95% CI mean 0.050–0.054 ms (batch means)"),
        "{console}"
    );
    assert!(!console.contains('≤') && !console.contains(CUT_LEGEND));
    assert_eq!(csv_field(&run, "latency_mean_us_ci_cut"), "");
}

#[test]
fn a_row_of_a_probe_that_split_its_late_events_says_their_cause() {
    let mut run = crate::document::fixture::run();
    let causes = crate::report::late::tests::causes(3, 1);
    run.scenarios[1].outcome.result.as_mut().unwrap().late = Some(causes);
    let text = render(&run, false);
    let burn = text.lines().position(|l| l.starts_with("burn")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[burn + 1],
        "          late: run-queue wait (89 %) of 4 late",
        "{text}"
    );
    assert_eq!(text.matches("late:").count(), 1, "{text}");
    let md = crate::report::markdown::render(&run);
    assert!(md.contains("| Load work | Late |\n| --- |"), "{md}");
    assert!(
        md.contains(" | run-queue wait (89 %) of 4 late |\n"),
        "{md}"
    );
    assert!(
        !crate::report::markdown::render(&crate::document::fixture::run()).contains("| Late |")
    );
}

#[test]
fn the_load_work_cell_says_rate_cpu_and_a_bound() {
    let work = crate::document::merge::tests::burn(100.0, 50.0, 1.0);
    let plain = load_work_cell(std::slice::from_ref(&work), None);
    assert_eq!(plain, "burn 100 Mloop/s, 50 % CPU");
    let bounded = LoadWork {
        cpu_pct_lower_bound: true,
        device_write_mb_s: None,
        ..work
    };
    assert_eq!(
        load_work_cell(&[bounded], None),
        "burn 100 Mloop/s, ≥ 50 % CPU (I/O not known)"
    );
}

#[test]
fn the_requests_loads_timed_follow_their_probes_table() {
    use crate::measure::requests::RequestLatencies;
    let mut run = crate::document::fixture::run();
    let mut requests = RequestLatencies::new(&[100_000_000]);
    requests.record(3_000_000);
    run.scenarios[1].outcome.load_work[0].requests = Some(requests);
    let text = render(&run, false);
    let title = format!("  {}:", super::super::requests::TITLE);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| *l == title).expect(&text);
    assert!(
        lines[at - 1].starts_with("video "),
        "after audio's rows: {text}"
    );
    assert!(lines[at + 2].starts_with("  burn "), "{text}");
    let gaming = lines.iter().position(|l| l.starts_with("--- gaming"));
    assert!(gaming > Some(at), "before the next probe's table: {text}");
    assert_eq!(text.matches(&title).count(), 1, "{text}");
    let md = crate::report::markdown::render(&run);
    assert!(md.contains("| Load | Threads | Rate Mloop/s |"), "{md}");
    let html = crate::report::html::render(&run).unwrap();
    let requests = html
        .find("requests the loads timed")
        .expect("in the HTML page");
    assert!(
        html[requests..].contains("<th>CPU eff Mloop/s</th>"),
        "{html}"
    );
    assert!(!render(&crate::document::fixture::run(), false).contains(&title));
}

#[test]
fn a_ratio_column_divides_by_the_same_figure_under_no_load() {
    let mut run = crate::document::fixture::run();
    let sheet = run.probes.get_mut("audio").unwrap();
    sheet.columns = vec![Column::ratio_to_none("Ratio", "mean", 6)];
    let text = render(&run, false);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("none") || l.starts_with("burn"))
        .collect();
    // The audio rows (mean latency 52.5 and 1234.5 µs), then gaming's.
    assert_eq!(rows[0].split_whitespace().nth(1), Some("1.00"), "{text}");
    assert_eq!(rows[1].split_whitespace().nth(1), Some("23.51"), "{text}");
    let without_baseline = render_row(&run.scenarios[1], &run.probes["audio"], &run.settings, None);
    assert!(
        without_baseline.starts_with("burn           -"),
        "{without_baseline}"
    );
}

#[test]
fn load_columns_show_the_loads_work_per_measurement_and_its_cpu() {
    let mut run = crate::document::fixture::run();
    let sheet = run.probes.get_mut("audio").unwrap();
    sheet.columns = vec![
        Column::load("Loads", ColumnSource::LoadAmount, 7),
        Column::load("LCPU %", ColumnSource::LoadCpu, 7),
    ];
    let sheet = sheet.clone();
    let cells = |scenario: &ScenarioResult| row_cells(scenario, &sheet, None)[1..3].to_vec();
    assert_eq!(cells(&run.scenarios[0]), ["-", "-"], "none: no load work");
    assert_eq!(cells(&run.scenarios[1]), ["2700", "165"]);
    // Two repeats merged hold the sum of their amounts; a second part
    // is joined with `+`, its CPU added, a lower bound marked.
    let burn = &mut run.scenarios[1];
    burn.repeats = vec![burn.outcome.clone(); 2];
    let mut second = burn.outcome.load_work[0].clone();
    second.amount = 30.0;
    second.cpu_pct = 10.0;
    second.cpu_pct_lower_bound = true;
    burn.outcome.load_work.push(second);
    assert_eq!(cells(burn), ["1350+15.0", "≥175"]);
    let json = serde_json::to_string(&sheet.columns[0]).unwrap();
    assert!(json.contains(r#""source":"load_amount""#), "{json}");
    let figures = serde_json::to_string(&Column::new("Mean", &["mean"], 6)).unwrap();
    assert!(!figures.contains("source"), "left out: {figures}");
    let old: Column =
        serde_json::from_str(r#"{"header":"Mean","figures":["mean"],"width":6,"missing":"-"}"#)
            .unwrap();
    assert_eq!(old.source, ColumnSource::Figures, "old documents read");
}

#[test]
fn telemetry_line_shows_figures_and_marks_absent_ones() {
    let mut scenario = crate::document::fixture::run().scenarios.remove(0);
    assert_eq!(render_telemetry(&scenario), "");
    let stat = |user, idle, steal, ctxt| {
        Some(StatCounters {
            cpu: CpuTicks {
                user,
                nice: 0,
                system: 0,
                idle,
                iowait: None,
                irq: None,
                softirq: None,
                steal: Some(steal),
            },
            ctxt: Some(ctxt),
            intr: None,
        })
    };
    let before = TelemetrySample {
        taken_ns: 0,
        stat: stat(0, 0, 0, 0),
        ..TelemetrySample::default()
    };
    let after = TelemetrySample {
        taken_ns: 2_000_000_000,
        stat: stat(90, 0, 10, 3000),
        ..TelemetrySample::default()
    };
    scenario.outcome.telemetry = Some(ScenarioTelemetry::new(before, after));
    assert_eq!(
        render_telemetry(&scenario),
        "  psi some cpu - mem - io - % | cs 1500/s irq -/s | cpu usr 90.0 sys 0.0 iowait - steal 10.0 % | swap in - out - majflt - | others - % cpu | DISTURBED\n"
    );
    scenario.repeats = vec![scenario.outcome.clone(), scenario.outcome.clone()];
    scenario.outcome.telemetry = None;
    let lines = render_telemetry(&scenario);
    let starts: Vec<_> = lines.lines().map(|l| &l[..20]).collect();
    assert_eq!(starts, ["  repeat 1: psi some", "  repeat 2: psi some"]);
}

#[test]
fn with_precision_each_row_says_its_measurements_and_what_is_not_precise() {
    use crate::document::schema::{FigureInterval, Intervals};
    let mut run = crate::document::fixture::run();
    run.settings.precision_pct = Some(5.0);
    run.settings.max_time_s = Some(30.0);
    assert!(render_preamble(&run)
        .contains("\n3 s per measurement until ±5 % (at most 30 s per scenario), loops_per_ms"));
    let mut scenario = run.scenarios[0].clone();
    let sheet = run.sheet(&scenario.probe).unwrap().clone();
    let row = render_row(&scenario, &sheet, &run.settings, None);
    assert!(
        row.ends_with("\n          no CI (1 × 3 s; not within ±5: mean, p99, deadlines)\n"),
        "{row}"
    );
    let interval = |figure: &str, value: f64| FigureInterval {
        figure: figure.into(),
        value,
        low: value - 1.0,
        high: value + 1.0,
        se: 0.5,
        df: 3.0,
        samples: 4,
    };
    scenario.repeats = vec![scenario.outcome.clone(); 4];
    scenario.intervals = Some(Intervals {
        method: IntervalMethod::Repeats,
        level: 0.95,
        figures: vec![interval("mean", 52.0), interval("p99", 300.0)],
    });
    let row = render_row(&scenario, &sheet, &run.settings, None);
    assert!(
        row.ends_with("(repeats, 4 × 3 s; not within ±5: deadlines)\n"),
        "{row}"
    );
    let failed = &run.scenarios[3];
    assert!(!render_row(failed, &sheet, &run.settings, None).contains("CI"));
}

#[test]
fn preamble_names_the_repeats_only_when_there_are_several() {
    let mut run = crate::document::fixture::run();
    assert!(render_preamble(&run).contains("\n3 s per scenario, loops_per_ms"));
    run.settings.repeats = 3;
    assert!(render_preamble(&run).contains("\n3 s per scenario × 3 repeats, loops_per_ms"));
}

#[test]
fn preamble_says_which_probes_measure_until_their_work_is_done() {
    let mut run = crate::document::fixture::run();
    run.probes.get_mut("gaming").unwrap().own_pace = true;
    assert!(render_preamble(&run).contains("\n3 s per scenario (gaming: until done), loops"));
    run.probes.get_mut("audio").unwrap().own_pace = true;
    run.settings.repeats = 3;
    let preamble = render_preamble(&run);
    assert!(
        preamble.contains("\neach scenario until its probe's work is done × 3 repeats, loops"),
        "{preamble}"
    );
}

#[test]
fn preamble_names_the_pm_qos_limit_only_when_held() {
    let mut run = crate::document::fixture::run();
    assert!(!render_preamble(&run).contains("PM QoS"));
    run.settings.cpu_dma_latency_us = Some(0);
    assert!(render_preamble(&run).contains("loads nice 0, PM QoS held at 0 µs\n"));
}

#[test]
fn preamble_names_the_placement_only_when_chosen() {
    let mut run = crate::document::fixture::run();
    assert!(render_preamble(&run).contains("loads nice 0\n"));
    run.settings.load_cpus = "1".parse().ok();
    assert!(render_preamble(&run).contains("loads nice 0, loads on CPUs 1\n"));
    run.settings.probe_cpus = "0".parse().ok();
    run.settings.load_cpu_weight = Some(10);
    assert!(render_preamble(&run)
        .contains("loads nice 0, probe on CPUs 0, loads on CPUs 1, loads at CPU weight 10\n"));
}
