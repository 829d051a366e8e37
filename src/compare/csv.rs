//! The comparison as CSV in long form: one record per row × run, with the
//! stored value (µs for latencies), its standard error, the change, the
//! p-value, the verdict and the spread it was judged against, for spreadsheets and scripts; then the % of
//! events late for each cause (figure `late:CAUSE`, see `compare::late`).

use super::Comparison;
use crate::figures::ChangeUnit;
use crate::report::csv::{name, opt};

const HEADER: &[&str] = &[
    "probe",
    "load",
    "figure",
    "run",
    "value",
    "se",
    "method",
    "change",
    "change_unit",
    "p",
    "verdict",
    "untested",
    "spread",
];

/// The comparison as CSV with a header row; runs lacking a scenario have no record.
pub fn render(c: &Comparison) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(HEADER).expect("writing to memory");
    for row in &c.rows {
        for (run, cell) in c.runs.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            let record = [
                row.probe.clone(),
                row.load.clone(),
                row.figure.clone(),
                run.name.clone(),
                cell.value.to_string(),
                opt(cell.se),
                cell.method.map(name).unwrap_or_default(),
                opt(cell.change),
                name(row.change_unit),
                opt(cell.p),
                name(cell.verdict),
                cell.untested.map(name).unwrap_or_default(),
                cell.spread.map(name).unwrap_or_default(),
            ];
            writer.write_record(&record).expect("writing to memory");
        }
    }
    for row in &c.late {
        for (run, cell) in c.runs.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            let record = [
                row.probe.clone(),
                row.load.clone(),
                format!("late:{}", row.cause.key()),
                run.name.clone(),
                cell.pct_of_events.to_string(),
                String::new(),
                String::new(),
                opt(cell.change),
                name(ChangeUnit::Percent),
                opt(cell.p),
                name(cell.verdict),
                cell.untested.map(name).unwrap_or_default(),
                cell.spread.map(name).unwrap_or_default(),
            ];
            writer.write_record(&record).expect("writing to memory");
        }
    }
    String::from_utf8(writer.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 text")
}
