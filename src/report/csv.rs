//! CSV rendering: one row per scenario with every figure as a plain number
//! in its stored unit (µs, %, per second), for spreadsheets and scripts;
//! in runs with confidence intervals, each interval's bounds and which of
//! them were cut at a limit (`FIELD_ci_cut`: `low`, `high` or `both`);
//! in runs whose probes split their late events, last, the events split,
//! the late ones and the dominant cause's key and share of the late delay
//! (`late_cause`, `late_cause_pct`).

use super::late;
use crate::document::estimate::Cut;
use crate::document::schema::{RunDocument, ScenarioResult};
use crate::measure::requests::RequestLatencies;

/// Columns before the figures.
const FIRST: &[&str] = &["probe", "load", "status"];
/// Columns after the figures.
const LAST: &[&str] = &[
    "load_unit",
    "load_amount",
    "load_rate_per_s",
    "load_cpu_pct",
    "error",
];

/// Columns of the loads' request latencies, after [`LAST`]'s, in runs
/// where a load timed its requests (each part's value joined by `+`; the
/// shares over the run's thresholds joined by `/`).
const REQUESTS: &[&str] = &[
    "load_request_count",
    "load_request_mean_us",
    "load_request_max_us",
    "load_request_over_pct",
];

/// The column saying which parts' `load_cpu_pct` is a lower bound (`true`
/// or `false`, joined by `+`), last, in runs where one is.
const CPU_LOWER_BOUND: &str = "load_cpu_pct_lower_bound";

/// Whether the CPU of a load of `run` is a lower bound.
fn has_cpu_lower_bound(run: &RunDocument) -> bool {
    run.scenarios
        .iter()
        .flat_map(|s| &s.outcome.load_work)
        .any(|w| w.cpu_pct_lower_bound)
}

/// Whether a scenario of `run` split its late events.
fn has_late(run: &RunDocument) -> bool {
    run.scenarios.iter().any(|s| late::causes_of(s).is_some())
}

/// Whether a load of `run` timed its requests.
fn has_requests(run: &RunDocument) -> bool {
    run.scenarios
        .iter()
        .flat_map(|s| &s.outcome.load_work)
        .any(|w| w.requests.is_some())
}

/// The request latency columns of a scenario.
fn request_fields(s: &ScenarioResult) -> [String; 4] {
    let of = |field: fn(&RequestLatencies) -> String| {
        joined(s, |w| w.requests.as_ref().map(field).unwrap_or_default())
    };
    [
        of(|r| r.count.to_string()),
        of(|r| opt(r.mean_us())),
        of(|r| (r.max_ns as f64 / 1e3).to_string()),
        of(|r| {
            let pcts: Vec<String> = r.over_pct().iter().map(|(_, p)| p.to_string()).collect();
            pcts.join("/")
        }),
    ]
}

/// The figure fields of every probe of `run`, in the order they first
/// appear in the probes' declarations.
fn figure_fields(run: &RunDocument) -> Vec<&str> {
    let mut fields: Vec<&str> = Vec::new();
    for sheet in run.probes().into_iter().filter_map(|p| run.sheet(p)) {
        for def in &sheet.figures {
            if !fields.contains(&def.field.as_str()) {
                fields.push(&def.field);
            }
        }
    }
    fields
}

/// The fields of the figures some scenario of `run` has an interval of,
/// in the order they first appear, with the figures' keys.
fn interval_fields(run: &RunDocument) -> Vec<(&str, &str)> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for scenario in &run.scenarios {
        let Some((intervals, sheet)) = scenario.intervals.as_ref().zip(run.sheet(&scenario.probe))
        else {
            continue;
        };
        for f in &intervals.figures {
            let Some(def) = sheet.figure(&f.figure) else {
                continue;
            };
            if !fields.iter().any(|(field, _)| *field == def.field) {
                fields.push((&def.field, &def.key));
            }
        }
    }
    fields
}

/// The interval columns' header: level and method, then per field its
/// bounds and which were cut.
fn interval_header(fields: &[(&str, &str)]) -> Vec<String> {
    let bounds = fields
        .iter()
        .flat_map(|(field, _)| ["low", "high", "cut"].map(|b| format!("{field}_ci_{b}")));
    ["ci_level", "ci_method"]
        .map(String::from)
        .into_iter()
        .chain(bounds)
        .collect()
}

/// A scenario's interval columns (empty where it has none).
fn interval_record(s: &ScenarioResult, fields: &[(&str, &str)]) -> Vec<String> {
    let Some(intervals) = &s.intervals else {
        return vec![String::new(); 2 + 3 * fields.len()];
    };
    let method = name(intervals.method);
    let bounds = fields.iter().flat_map(|(_, key)| {
        match intervals.figures.iter().find(|f| f.figure == *key) {
            None => [String::new(), String::new(), String::new()],
            Some(f) => {
                let cut = match Cut::of(f, intervals.level) {
                    Cut {
                        low: true,
                        high: true,
                    } => "both",
                    Cut { low: true, .. } => "low",
                    Cut { high: true, .. } => "high",
                    _ => "",
                };
                [f.low.to_string(), f.high.to_string(), cut.to_string()]
            }
        }
    });
    [intervals.level.to_string(), method]
        .into_iter()
        .chain(bounds)
        .collect()
}

/// A serde name (`batch_means`, `no_difference`) without the quotes.
pub(crate) fn name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The value as text, or an empty field when there is none.
pub(crate) fn opt(value: Option<impl ToString>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn joined(
    scenario: &ScenarioResult,
    field: impl Fn(&crate::document::schema::LoadWork) -> String,
) -> String {
    scenario
        .outcome
        .load_work
        .iter()
        .map(field)
        .collect::<Vec<_>>()
        .join("+")
}

fn record(s: &ScenarioResult, fields: &[&str]) -> Vec<String> {
    let figures = s.outcome.result.as_ref().map(|r| &r.figures);
    let mut record = vec![
        s.probe.clone(),
        s.load.clone(),
        format!("{:?}", s.outcome.status).to_lowercase(),
    ];
    record.extend(
        fields
            .iter()
            .map(|f| opt(figures.and_then(|figures| figures.get(*f)))),
    );
    record.extend([
        joined(s, |w| w.unit.clone()),
        joined(s, |w| w.amount.to_string()),
        joined(s, |w| w.rate_per_s.to_string()),
        joined(s, |w| w.cpu_pct.to_string()),
        s.outcome.error.clone().unwrap_or_default(),
    ]);
    record
}

/// The run as CSV with a header row: one column per figure any of its
/// probes has, empty where a probe lacks it.
pub fn render(run: &RunDocument) -> String {
    let fields = figure_fields(run);
    let requests = has_requests(run);
    let intervals = interval_fields(run);
    let bound = has_cpu_lower_bound(run);
    let mut writer = csv::Writer::from_writer(Vec::new());
    let extra = if requests { REQUESTS } else { &[] };
    let bound_column = bound.then_some(&CPU_LOWER_BOUND);
    let header = FIRST
        .iter()
        .chain(&fields)
        .chain(LAST)
        .chain(extra)
        .chain(bound_column);
    let mut header: Vec<String> = header.map(|h| h.to_string()).collect();
    if !intervals.is_empty() {
        header.extend(interval_header(&intervals));
    }
    let split = has_late(run);
    if split {
        header.extend(late::CSV_COLUMNS.map(String::from));
    }
    writer.write_record(header).expect("writing to memory");
    for scenario in &run.scenarios {
        let mut record = record(scenario, &fields);
        if requests {
            record.extend(request_fields(scenario));
        }
        if bound {
            record.push(joined(scenario, |w| w.cpu_pct_lower_bound.to_string()));
        }
        if !intervals.is_empty() {
            record.extend(interval_record(scenario, &intervals));
        }
        if split {
            record.extend(late::csv_fields(late::causes_of(scenario)));
        }
        writer.write_record(record).expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("flushing to memory"))
        .expect("CSV of UTF-8 fields is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_latency_columns_only_in_runs_whose_loads_timed_requests() {
        let mut run = crate::document::fixture::run();
        let header = |run: &RunDocument| render(run).lines().next().unwrap().to_string();
        assert!(!header(&run).contains("load_request"));
        let mut requests = RequestLatencies::new(&[100_000_000, 2_000_000_000]);
        [1_000_000, 300_000_000]
            .into_iter()
            .for_each(|ns| requests.record(ns));
        run.scenarios[1].outcome.load_work[0].requests = Some(requests);
        let csv = render(&run);
        assert!(header(&run).ends_with(
            ",error,load_request_count,load_request_mean_us,load_request_max_us,load_request_over_pct"
        ));
        let row = csv.lines().nth(2).unwrap();
        assert!(row.ends_with(",2,150500,300000,50/0"), "{row}");
    }

    #[test]
    fn late_columns_only_in_runs_whose_probes_split_late_events() {
        let mut run = crate::document::fixture::run();
        assert!(!render(&run).contains("late_cause"));
        let causes = crate::report::late::tests::causes(3, 1);
        run.scenarios[1].outcome.result.as_mut().unwrap().late = Some(causes);
        let csv = render(&run);
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .ends_with(",error,events_split,late_events,late_cause,late_cause_pct"));
        assert!(lines.next().unwrap().ends_with(",,,,"), "{csv}");
        assert!(
            lines.next().unwrap().ends_with(",100,4,run_queue,89.2"),
            "{csv}"
        );
    }

    #[test]
    fn a_cpu_figure_that_is_a_lower_bound_says_so_in_a_last_column() {
        let mut run = crate::document::fixture::run();
        assert!(!render(&run).contains(CPU_LOWER_BOUND));
        run.scenarios[1].outcome.load_work[0].cpu_pct_lower_bound = true;
        let csv = render(&run);
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .ends_with(",error,load_cpu_pct_lower_bound"));
        assert!(lines.next().unwrap().ends_with(','), "{csv}");
        assert!(lines.next().unwrap().ends_with(",true"), "{csv}");
    }
}
