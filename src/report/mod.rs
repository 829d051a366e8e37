//! The renderers that turn run documents (`crate::document`) into tables,
//! CSV, Markdown, the overview, `report --explain` and the HTML page.

pub mod chart;
pub mod csv;
pub mod explain;
pub mod heat_map;
pub mod html;
pub mod late;
pub mod late_context;
pub mod markdown;
pub mod overview;
pub mod requests;
pub mod table;
pub mod why_late;

#[cfg(test)]
mod tests {
    use crate::document::fixture;

    #[test]
    fn table_snapshot() {
        insta::assert_snapshot!(super::table::render(&fixture::run(), false));
    }

    #[test]
    fn markdown_snapshot() {
        insta::assert_snapshot!(super::markdown::render(&fixture::run()));
    }

    #[test]
    fn csv_snapshot() {
        insta::assert_snapshot!(super::csv::render(&fixture::run()));
    }
}

/// A probe that is not frame-based and that no renderer was written for
/// shows up in every output from its declarations alone.
#[cfg(test)]
mod declared_probe_tests {
    use crate::compare::{column_names, text, CompareOptions, Comparison, Layout};
    use crate::document::fixture;
    use crate::document::schema::{Measurement, RunDocument, ScenarioResult, ScenarioStatus};
    use crate::figures::{Better, Column, FigureDef, Formula, ProbeResult, ProbeSheet, Spread};
    use crate::figures::{Tally, Unit};
    use crate::measure::latency::LatencyHistogram;
    use crate::measure::sched::SchedApplied;

    /// A stopwatch timing a job: its time (a distribution) and its runs.
    fn sheet() -> ProbeSheet {
        let column = |header: &str, key: &str| Column::new(header, &[key], 12);
        let time = Formula::Mean {
            samples: "time".into(),
        };
        let runs = Formula::Total {
            count: "runs".into(),
        };
        ProbeSheet {
            summary: "times a job".into(),
            own_pace: false,
            columns: vec![column("Time (ms)", "time"), column("Runs", "runs")],
            figures: vec![
                FigureDef::new(
                    "time",
                    "job_time_us",
                    "job time (ms)",
                    Unit::Micros,
                    Better::Lower,
                    time,
                )
                .spread(Spread::SubWindows)
                .headline()
                .compared(),
                FigureDef::new(
                    "runs",
                    "job_runs",
                    "jobs run",
                    Unit::Count,
                    Better::Higher,
                    runs,
                ),
            ],
        }
    }

    /// Jobs of `ms` ms (a little more in later sub-windows).
    fn tally(ms: u64, jobs: u64) -> Tally {
        let mut h = LatencyHistogram::new();
        (0..jobs).for_each(|i| h.record_ns((ms + i % 3) * 1_000_000));
        let sum = (0..jobs).map(|i| (ms + i % 3) * 1_000_000).sum();
        Tally::default()
            .with_samples("time", &h, sum)
            .with_count("runs", jobs as f64)
            .with_count("measured_s", 1.0)
    }

    fn run_with_stopwatch(ms: u64) -> RunDocument {
        let mut run = fixture::run();
        run.probes.insert("stopwatch".into(), sheet());
        let batches = (0..20).map(|k| tally(ms + k % 2, 5)).collect();
        let result = ProbeResult::new(&sheet(), tally(ms, 100), batches, SchedApplied::for_tests());
        let measurement = Measurement {
            status: ScenarioStatus::Ok,
            error: None,
            result: Some(result),
            load_work: Vec::new(),
            telemetry: None,
        };
        let scenario =
            ScenarioResult::single("stopwatch".into(), "none".into(), measurement, &sheet());
        run.scenarios.push(scenario);
        run
    }

    #[test]
    fn tables_csv_and_markdown_show_its_figures() {
        let run = run_with_stopwatch(20);
        let table = super::table::render(&run, false);
        let expected = "--- stopwatch: times a job ---\nLoad         Time (ms)          Runs  Load work\nnone            20.990           100  -\n";
        assert!(table.contains(expected), "{table}");
        assert!(table.contains("95% CI time "), "{table}");
        let csv = super::csv::render(&run);
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .contains(",job_time_us,job_runs,"),
            "{csv}"
        );
        assert!(csv.contains("\nstopwatch,none,ok,"), "{csv}");
        let md = super::markdown::render(&run);
        assert!(
            md.contains("## stopwatch\n\n| Load | Time (ms) | Runs | Load work |"),
            "{md}"
        );
    }

    #[test]
    fn compare_tests_its_figures() {
        let runs = [run_with_stopwatch(20), run_with_stopwatch(40)];
        let options = CompareOptions {
            alpha: 0.01,
            figures: vec!["time".into(), "runs".into()],
        };
        let names = column_names(&runs, &[]);
        let files = vec!["a.json".into(), "b.json".into()];
        let c = Comparison::build(&runs, names, files, &options);
        let rows: Vec<_> = c.rows.iter().filter(|r| r.probe == "stopwatch").collect();
        assert_eq!(rows.len(), 2);
        let time = rows[0].cells[1].as_ref().unwrap();
        assert_eq!(time.verdict, crate::compare::Verdict::Worse);
        let text = text::render(&c, Layout::Columns);
        assert!(text.contains("stopwatch  none  job time (ms)"), "{text}");
    }
}
