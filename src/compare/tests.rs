//! Comparisons of synthetic runs whose truth is known: latencies of
//! successive periods follow an AR(1) process (strongly autocorrelated, as
//! real ones are), optionally shifted.

use super::*;
use crate::document::fixture;
use crate::figures::{ProbeResult, Tally};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::SchedApplied;
use rand::{rngs::StdRng, SeedableRng as _};
use rand_distr::{Distribution as _, Normal};

const BATCHES: usize = 20;
const PER_BATCH: usize = 100;
/// Correlation of successive periods' latencies.
const PHI: f64 = 0.8;

/// Latencies (µs) of `n` periods around 1000 µs times `scale`.
fn latencies(n: usize, scale: f64, rng: &mut StdRng) -> Vec<f64> {
    let noise = Normal::new(0.0, 100.0).unwrap();
    let mut x = 0.0;
    (0..n)
        .map(|_| {
            x = PHI * x + noise.sample(rng);
            (1000.0 + x).max(1.0) * scale
        })
        .collect()
}

fn histogram_of(values_us: &[f64], digits: u8) -> LatencyHistogram {
    let mut histogram = LatencyHistogram::with_precision(digits);
    for v in values_us {
        histogram.record_ns((v * 1000.0) as u64);
    }
    histogram
}

/// The tally of periods with latencies `values_us` over `seconds`, each
/// getting the CPU it wanted, with a histogram of `digits` digits.
fn tally_of(values_us: &[f64], seconds: f64, digits: u8) -> Tally {
    let n = values_us.len() as f64;
    let sum_ns = values_us.iter().map(|v| (v * 1000.0) as u64).sum();
    Tally::default()
        .with_samples("latency", &histogram_of(values_us, digits), sum_ns)
        .with_count("measured_s", seconds)
        .with_count("executed", n)
        .with_count("periods", n)
        .with_count("met", n)
        .with_count("cpu_wanted_ms", n * 0.025)
        .with_count("cpu_received_ms", n * 0.025)
}

/// `scenario` with its latencies and batches replaced by ones drawn from
/// the process, scaled by `scale`.
fn synthetic(mut scenario: ScenarioResult, scale: f64, rng: &mut StdRng) -> ScenarioResult {
    let values = latencies(BATCHES * PER_BATCH, scale, rng);
    let batches = values
        .chunks(PER_BATCH)
        .map(|chunk| tally_of(chunk, 0.5, 2))
        .collect();
    let sheet = crate::probe::sheet_of(&scenario.probe).unwrap();
    let sched = SchedApplied::for_tests();
    let result = ProbeResult::new(&sheet, tally_of(&values, 10.0, 3), batches, sched);
    scenario.outcome.result = Some(result);
    scenario
}

/// The fixture run with every successful scenario made synthetic.
fn synthetic_run(scale: f64, seed: u64) -> RunDocument {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut run = fixture::run();
    run.scenarios = run
        .scenarios
        .into_iter()
        .map(|s| match s.outcome.result {
            Some(_) => synthetic(s, scale, &mut rng),
            None => s,
        })
        .collect();
    run
}

fn options(figures: &[&str]) -> CompareOptions {
    CompareOptions {
        alpha: 0.01,
        figures: figures.iter().map(|f| f.to_string()).collect(),
    }
}

fn compare(runs: &[RunDocument], figures: &[&str]) -> Comparison {
    let names = column_names(runs, &[]);
    let files = (0..runs.len()).map(|i| format!("run{i}.json")).collect();
    Comparison::build(runs, names, files, &options(figures))
}

fn verdicts(c: &Comparison, figure: &str) -> Vec<Verdict> {
    c.rows
        .iter()
        .filter(|r| r.figure == figure)
        .filter_map(|r| r.cells[1].as_ref().map(|c| c.verdict))
        .collect()
}

/// An estimate of `value` with standard error `se` over 20 sub-windows.
fn estimated(value: f64, se: f64) -> FigureEstimate {
    let estimate = crate::stats::Estimate {
        value,
        se,
        df: 19.0,
        samples: 20,
    };
    FigureEstimate {
        value,
        uncertainty: Some((estimate, IntervalMethod::BatchMeans)),
    }
}

/// The row of `figure` of the audio probe, baseline `base`, then `this`.
fn audio_row(figure: &str, base: FigureEstimate, this: FigureEstimate) -> Row {
    let sheet = crate::probe::sheet_of("audio").unwrap();
    let figure = Figure::Probe(sheet.figure(figure).unwrap().clone());
    Row {
        probe: "audio".into(),
        load: "burn".into(),
        figure: figure.key(),
        label: figure.label(),
        unit: figure.unit(),
        better: figure.better(),
        change_unit: figure.change_unit(),
        cells: vec![
            Some(cell(&figure, None, base, true, 0.01, None)),
            Some(cell(&figure, Some(base), this, false, 0.01, None)),
        ],
    }
}

#[test]
fn a_significant_change_smaller_than_the_shown_step_gets_no_verdict() {
    // Desired CPU 99.97 % against 100.00 %, each ± 0.001: Welch calls it,
    // but both show as 100.0 (one decimal).
    let row = audio_row("desired", estimated(100.0, 0.001), estimated(99.97, 0.001));
    let cell = row.cells[1].as_ref().unwrap();
    assert!(cell.p.unwrap() < 0.01, "{cell:?}");
    assert_eq!(cell.verdict, Verdict::BelowResolution);
    assert_eq!(text::cell_text(&row, Some(cell)), "100.0 -0.03pt");
    // Mean latency 1000.4 µs against 1000.0 µs: under the 1 µs that 0.001 ms shows.
    let mean = audio_row("mean", estimated(1000.0, 0.01), estimated(1000.4, 0.01));
    assert_eq!(
        mean.cells[1].as_ref().unwrap().verdict,
        Verdict::BelowResolution
    );
    let c = Comparison {
        rows: vec![row],
        ..snapshot_comparison()
    };
    let legend = text::legend(&c).join("\n");
    assert!(
        legend.contains("no mark on 1 cell(s): significant at alpha"),
        "{legend}"
    );
}

#[test]
fn a_called_change_shows_in_the_printed_values_and_change() {
    // 0.2 points of desired CPU: one step of 0.1 is enough.
    let row = audio_row("desired", estimated(100.0, 0.01), estimated(99.8, 0.01));
    let cell = row.cells[1].as_ref().unwrap();
    assert_eq!(cell.verdict, Verdict::Worse);
    assert_eq!(text::cell_text(&row, Some(cell)), "99.8 -0.2pt worse [w]");
    // 2 µs on a mean of 100 ms: +0.002 %, which one decimal would show as +0.0 %.
    let row = audio_row("mean", estimated(100_000.0, 0.1), estimated(100_002.0, 0.1));
    let cell = row.cells[1].as_ref().unwrap();
    assert_eq!(cell.verdict, Verdict::Worse);
    let shown = text::cell_text(&row, Some(cell));
    assert_eq!(shown, "100.002 +0.002% worse [w]");
    assert_ne!(
        text::value_text(&row, row.cells[0].as_ref().unwrap().value),
        text::value_text(&row, cell.value)
    );
}

#[test]
fn a_known_shift_is_marked_in_its_direction() {
    let base = synthetic_run(1.0, 1);
    let slower = synthetic_run(1.3, 2);
    let faster = synthetic_run(0.7, 3);
    let c = compare(&[base, slower, faster], &["mean", "p99"]);
    for row in &c.rows {
        let (slow, fast) = (
            row.cells[1].as_ref().unwrap(),
            row.cells[2].as_ref().unwrap(),
        );
        assert_eq!(slow.verdict, Verdict::Worse, "{} {}", row.probe, row.figure);
        assert_eq!(
            fast.verdict,
            Verdict::Better,
            "{} {}",
            row.probe,
            row.figure
        );
        assert!(slow.change.unwrap() > 15.0 && fast.change.unwrap() < -15.0);
    }
    let counts = |s: &RunSummary| (s.better, s.worse, s.mixed, s.same);
    assert_eq!(counts(&c.summaries[0]), (0, 5, 0, 0));
    assert_eq!(counts(&c.summaries[1]), (5, 0, 0, 0));
    assert!(c.summaries[0].figures[0].geomean_ratio > 1.15);
    assert!(c.summaries[1].figures[0].geomean_ratio < 0.85);
}

#[test]
fn the_html_page_colours_significant_changes_by_direction() {
    let runs = [
        synthetic_run(1.0, 1),
        synthetic_run(1.3, 2),
        synthetic_run(0.7, 3),
        synthetic_run(1.0, 4),
    ];
    let c = compare(&runs, &["mean", "p99"]);
    let page = html::render(&c, &runs).unwrap();
    let figures = page.find("<h2>Figures</h2>").unwrap();
    let table = &page[figures..page.find("<section>").unwrap()];
    let cells = |class: &str| table.matches(&format!("<td class=\"{class}\">")).count();
    // Every row: the slower run worse, the faster better, the same-scale run unmarked.
    assert_eq!(cells("worse"), c.rows.len());
    assert_eq!(cells("better"), c.rows.len());
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), c.rows.len());
    for row in rows {
        let cells: Vec<&str> = row.split("<td").skip(4).collect();
        assert!(cells[1].starts_with(" class=\"worse\""), "{row}");
        assert!(cells[2].starts_with(" class=\"better\""), "{row}");
        assert!(cells[3].starts_with('>'), "{row}");
    }
}

/// Two-sided p-value of a t-test that takes every period's latency as an
/// independent sample: what a naive comparison would do.
fn naive_p(a: &[f64], b: &[f64]) -> f64 {
    let stats = |v: &[f64]| crate::stats::Estimate::of_samples(v).unwrap();
    crate::stats::welch::test(&stats(a), &stats(b)).unwrap().p
}

#[test]
fn samples_of_one_process_are_rarely_marked() {
    const TRIALS: u64 = 300;
    let mut marked = 0;
    let mut naive_marked = 0;
    for trial in 0..TRIALS {
        let mut rng = StdRng::seed_from_u64(1000 + trial);
        let one = fixture::run().scenarios[1].clone();
        let (a, b) = (
            synthetic(one.clone(), 1.0, &mut rng),
            synthetic(one, 1.0, &mut rng),
        );
        let mut runs = [fixture::run(), fixture::run()];
        runs[0].scenarios = vec![a];
        runs[1].scenarios = vec![b];
        let c = compare(&runs, &["mean"]);
        if matches!(verdicts(&c, "mean")[0], Verdict::Better | Verdict::Worse) {
            marked += 1;
        }
        let mut rng = StdRng::seed_from_u64(1000 + trial);
        let (a, b) = (
            latencies(BATCHES * PER_BATCH, 1.0, &mut rng),
            latencies(BATCHES * PER_BATCH, 1.0, &mut rng),
        );
        if naive_p(&a, &b) < 0.01 {
            naive_marked += 1;
        }
    }
    let rate = marked as f64 / TRIALS as f64;
    let naive_rate = naive_marked as f64 / TRIALS as f64;
    // At alpha 0.01 about 3 of 300 are expected; 12 or more would happen by
    // chance with probability below 1e-4 if the test held its level.
    assert!(rate < 0.04, "false positives {rate}");
    // The same data tested period by period calls far more differences real.
    assert!(naive_rate > 0.2, "naive false positives {naive_rate}");
}

#[test]
fn identical_runs_change_nothing() {
    let run = synthetic_run(1.0, 5);
    let mut keys = crate::probe::figure_keys(false);
    keys.push("work".into());
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let c = compare(&[run.clone(), run], &keys);
    assert!(!c.rows.is_empty());
    for row in &c.rows {
        let cell = row.cells[1]
            .as_ref()
            .unwrap_or_else(|| panic!("no value for {} {}", row.probe, row.figure));
        let base = row.cells[0].as_ref().unwrap();
        assert_eq!(cell.value, base.value, "{} {}", row.probe, row.figure);
        assert_eq!(
            cell.change.unwrap_or(0.0),
            0.0,
            "{} {}",
            row.probe,
            row.figure
        );
        assert!(
            !matches!(cell.verdict, Verdict::Better | Verdict::Worse),
            "{} {}",
            row.probe,
            row.figure
        );
    }
    let s = &c.summaries[0];
    assert_eq!((s.better, s.worse, s.mixed), (0, 0, 0));
    assert!(s
        .figures
        .iter()
        .all(|f| (f.geomean_ratio - 1.0).abs() < 1e-12));
}

#[test]
fn figures_without_an_interval_are_not_marked() {
    let c = compare(&[fixture::run(), fixture::run()], &["mean", "max", "work"]);
    assert!(!c.rows.is_empty());
    for row in &c.rows {
        let cell = row.cells[1]
            .as_ref()
            .unwrap_or_else(|| panic!("no value for {} {}", row.probe, row.figure));
        assert_eq!(cell.verdict, Verdict::Untested);
        assert_eq!(cell.untested, Some(Untested::WithoutInterval));
    }
    let text = text::render(&c, Layout::Columns);
    let no_mark = format!("no mark on {} cell(s)", c.rows.len());
    assert!(text.contains(&no_mark), "{no_mark}:\n{text}");
}

#[test]
fn missing_scenarios_show_a_dash() {
    let base = synthetic_run(1.0, 1);
    let mut other = synthetic_run(1.0, 2);
    other.scenarios.retain(|s| s.probe != "gaming");
    let c = compare(&[base, other], &["mean"]);
    let gaming = c.rows.iter().find(|r| r.probe == "gaming").unwrap();
    assert!(gaming.cells[1].is_none());
    let text = text::render(&c, Layout::Columns);
    assert!(text.contains(text::MISSING));
}

#[test]
fn column_names_come_from_options_comments_or_kernels() {
    let mut runs = [fixture::run(), fixture::run(), fixture::run()];
    runs[1].run.comment = None;
    runs[2].run.comment = None;
    assert_eq!(
        column_names(&runs, &[]),
        ["fixture, with a | pipe", "6.18.0-test", "6.18.0-test (2)"]
    );
    assert_eq!(column_names(&runs[..1], &["base".into()]), ["base"]);
}

fn snapshot_comparison() -> Comparison {
    let mut base = synthetic_run(1.0, 11);
    base.run.comment = Some("base".into());
    let mut other = synthetic_run(1.25, 12);
    other.run.comment = Some("slower".into());
    other.settings.load_nice = 19;
    compare(
        &[base, other],
        &["mean", "p99", "max", "deadlines", "fps", "work"],
    )
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(text::render(&snapshot_comparison(), Layout::Columns));
}

#[test]
fn rows_layout_snapshot() {
    insta::assert_snapshot!(text::render(&snapshot_comparison(), Layout::Rows));
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(markdown::render(&snapshot_comparison(), Layout::Columns));
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!(csv::render(&snapshot_comparison()));
}

#[test]
fn json_names_the_method_and_verdicts() {
    let json = serde_json::to_value(snapshot_comparison()).unwrap();
    let cell = &json["rows"][0]["cells"][1];
    assert_eq!(cell["method"], "batch_means");
    assert_eq!(cell["verdict"], "worse");
    assert_eq!(json["differences"][0]["what"], "load nice");
}

/// Every figure the fixture's probes declare: more than fit on one line.
const EVERY_FIGURE: &[&str] = &[
    "samples",
    "mean",
    "sd",
    "p50",
    "p90",
    "p99",
    "p999",
    "max",
    "executed",
    "dropped",
    "desired",
    "work_ratio",
    "periods",
    "met",
    "deadlines",
    "late_max",
    "late_mean",
    "fps",
    "low1",
    "work",
];

/// Three runs (a baseline, one slower, one alike) compared on every figure.
fn wide_comparison() -> Comparison {
    let names = ["base", "slower", "same"];
    let runs: Vec<RunDocument> = [(1.0, 21), (1.25, 22), (1.0, 23)]
        .into_iter()
        .zip(names)
        .map(|((scale, seed), name)| {
            let mut run = synthetic_run(scale, seed);
            run.run.comment = Some(name.into());
            run
        })
        .collect();
    compare(&runs, EVERY_FIGURE)
}

#[test]
fn wide_rows_split_into_blocks_that_fit_and_keep_every_figure() {
    let c = wide_comparison();
    let text = text::render(&c, Layout::Rows);
    let (table, _) = text.split_once("\nslower against base").unwrap();
    for line in table.lines().filter(|l| !l.starts_with("base: ")) {
        assert!(
            line.chars().count() <= text::ROWS_WIDTH,
            "{} characters: {line}",
            line.chars().count()
        );
    }
    for (probe, load, rows) in text::by_scenario(&c) {
        let blocks = text::scenario_blocks(&c, &rows);
        assert!(blocks.len() > 1, "{probe} under {load}: one block");
        let headers: Vec<&String> = blocks.iter().flat_map(|b| &b[0][1..]).collect();
        let labels: Vec<&String> = rows.iter().map(|r| &r.label).collect();
        assert_eq!(headers, labels, "each figure once, in order");
        for block in &blocks {
            let names: Vec<&str> = block.iter().map(|line| line[0].as_str()).collect();
            assert_eq!(names, ["run", "base", "slower", "same"]);
        }
    }
}

#[test]
fn wide_rows_layout_snapshot() {
    insta::assert_snapshot!(text::render(&wide_comparison(), Layout::Rows));
}

#[test]
fn markdown_rows_layout_snapshot() {
    insta::assert_snapshot!(markdown::render(&wide_comparison(), Layout::Rows));
}

/// A store's points of `run`'s series: `values[i]` as `figure` of every
/// scenario of a run `i` (keys `h-i@host`), one run an hour.
fn history_points(
    run: &RunDocument,
    figure: &str,
    values: &[f64],
) -> Vec<crate::store::query::Point> {
    let machine = crate::store::fingerprint::machine_of(run);
    let series = crate::store::fingerprint::series_key(
        &machine,
        &crate::store::fingerprint::settings_hash(run),
        run,
    );
    let mut points = Vec::new();
    for (i, value) in values.iter().enumerate() {
        for s in run.scenarios.iter().filter(|s| s.outcome.result.is_some()) {
            points.push(crate::store::query::Point {
                series: series.clone(),
                run_key: format!("h-{i}@host"),
                run_id: format!("h-{i}"),
                hostname: "host".into(),
                machine: machine.fingerprint.clone(),
                started: String::new(),
                started_unix: i as i64 * 3600,
                kernel_release: "6.18".into(),
                comment: None,
                suite: None,
                probe: s.probe.clone(),
                load: s.load.clone(),
                figure: figure.into(),
                unit: "micros".into(),
                better: "lower".into(),
                value: *value,
                ci_low: None,
                ci_high: None,
            });
        }
    }
    points
}

/// `runs` compared on `figure` with `history` of their series.
fn compare_with(runs: &[RunDocument], figure: &str, history: &History) -> Comparison {
    let names = column_names(runs, &[]);
    let files = (0..runs.len()).map(|i| format!("run{i}.json")).collect();
    Comparison::build_with_history(runs, names, files, &options(&[figure]), history)
}

#[test]
fn a_difference_within_the_run_to_run_spread_of_the_store_is_not_marked() {
    // Two runs 10 % apart, each with a tight batch-means interval: within
    // the runs alone, the difference is significant.
    let runs = [synthetic_run(1.0, 1), synthetic_run(1.1, 2)];
    let alone = compare(&runs, &["mean"]);
    assert!(
        verdicts(&alone, "mean").contains(&Verdict::Worse),
        "{alone:?}"
    );
    // The store's runs of the series move by about 13 % from one to the
    // next (a run-to-run SD of 131 µs): 10 % is within that.
    let levels = [1000.0, 1150.0, 990.0, 860.0, 1100.0, 900.0, 1120.0, 950.0];
    let points = history_points(&runs[0], "mean", &levels);
    let keys = runs
        .iter()
        .map(crate::store::rows::run_key)
        .collect::<Vec<_>>();
    let history = History::of_points("s.sqlite".into(), &runs, &[1, 1], &keys, &points);
    let judged = compare_with(&runs, "mean", &history);
    let cells: Vec<&Cell> = judged
        .rows
        .iter()
        .filter_map(|r| r.cells[1].as_ref())
        .filter(|c| c.p.is_some())
        .collect();
    assert!(!cells.is_empty());
    for cell in cells {
        assert_eq!(cell.spread, Some(Spread::History), "{cell:?}");
        assert_eq!(cell.verdict, Verdict::NoDifference, "{cell:?}");
    }
    assert_eq!(judged.history[0].runs, levels.len());
    let text = text::render(&judged, Layout::Columns);
    assert!(text.contains("n.s. [h]"), "{text}");
    assert!(
        text.contains("[h]: judged against the run-to-run spread"),
        "{text}"
    );
    // A change far beyond that spread is still called.
    let far = [synthetic_run(1.0, 1), synthetic_run(2.0, 2)];
    let history = History::of_points("s.sqlite".into(), &far, &[1, 1], &keys, &points);
    let judged = compare_with(&far, "mean", &history);
    assert!(
        verdicts(&judged, "mean")
            .iter()
            .all(|v| *v == Verdict::Worse),
        "{judged:?}"
    );
    assert!(judged.worse().count() > 0);
}

#[test]
fn the_compared_runs_and_short_histories_are_not_a_history() {
    let runs = [synthetic_run(1.0, 1), synthetic_run(1.05, 2)];
    let keys = runs
        .iter()
        .map(crate::store::rows::run_key)
        .collect::<Vec<_>>();
    // Three other runs are too few.
    let points = history_points(&runs[0], "mean", &[1000.0, 1300.0, 700.0]);
    let history = History::of_points("s".into(), &runs, &[1, 1], &keys, &points);
    let judged = compare_with(&runs, "mean", &history);
    let spreads = judged.spreads();
    assert_eq!(spreads, [Spread::WithinRun], "{judged:?}");
    // The compared runs' own points are left out of their history.
    let mut own = history_points(&runs[0], "mean", &[1000.0, 1300.0, 700.0, 1200.0]);
    for p in &mut own {
        p.run_key = keys[0].clone();
    }
    let history = History::of_points("s".into(), &runs, &[1, 1], &keys, &own);
    assert_eq!(history.columns[0].runs, 0);
}

#[test]
fn a_verdict_within_the_run_alone_cannot_fail_the_gate() {
    let runs = [synthetic_run(1.0, 1), synthetic_run(2.0, 2)];
    let c = compare(&runs, &["mean"]);
    let worse: Vec<&Cell> = c
        .rows
        .iter()
        .filter_map(|r| r.cells[1].as_ref())
        .filter(|c| c.verdict == Verdict::Worse)
        .collect();
    assert!(!worse.is_empty(), "{c:?}");
    assert!(worse.iter().all(|c| c.spread == Some(Spread::WithinRun)));
    assert_eq!(
        c.worse().count(),
        0,
        "a within-run verdict fails --fail-on worse"
    );
    let text = text::render(&c, Layout::Columns);
    assert!(text.contains("worse [w]"), "{text}");
    assert!(text.contains("--fail-on leaves these out"), "{text}");
}

#[test]
fn runs_of_one_series_share_one_estimate_of_its_spread() {
    // Four other runs: differences 300, -600, 500 µs, a variance of
    // 700000 / 6 with 2 (n - 1)² / (3n - 4) = 2.25 degrees of freedom. Both
    // runs are widened by that one estimate, so the test has 2.25, not the
    // 4.5 two independent estimates would give.
    let runs = [synthetic_run(1.0, 1), synthetic_run(2.0, 2)];
    let keys: Vec<String> = runs.iter().map(crate::store::rows::run_key).collect();
    let points = history_points(&runs[0], "mean", &[1000.0, 1300.0, 700.0, 1200.0]);
    let history = History::of_points("s".into(), &runs, &[1, 1], &keys, &points);
    let c = compare_with(&runs, "mean", &history);
    let row = c.rows.iter().find(|r| r.cells[1].is_some()).unwrap();
    let (base, this) = (
        row.cells[0].as_ref().unwrap(),
        row.cells[1].as_ref().unwrap(),
    );
    let t = (this.value - base.value) / (2.0 * 700_000.0 / 6.0_f64).sqrt();
    let expected = crate::stats::two_sided_p(t, 2.25);
    assert!(
        (this.p.unwrap() - expected).abs() < 1e-9,
        "{this:?} {expected}"
    );
}
