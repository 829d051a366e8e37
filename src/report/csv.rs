//! CSV rendering: one row per scenario with every figure as a plain number
//! in its stored unit (µs, %, per second), for spreadsheets and scripts.

use super::schema::{RunDocument, ScenarioResult};

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

/// The value as text, or an empty field when there is none.
pub(crate) fn opt(value: Option<impl ToString>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn joined(scenario: &ScenarioResult, field: impl Fn(&super::schema::LoadWork) -> String) -> String {
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
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header = FIRST.iter().chain(&fields).chain(LAST);
    writer.write_record(header).expect("writing to memory");
    for scenario in &run.scenarios {
        writer
            .write_record(record(scenario, &fields))
            .expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("flushing to memory"))
        .expect("CSV of UTF-8 fields is UTF-8")
}
