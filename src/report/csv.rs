//! CSV rendering: one row per scenario with every headline figure as a plain
//! number (µs, %, per second), for spreadsheets and scripts.

use super::schema::{RunDocument, ScenarioResult};

const COLUMNS: &[&str] = &[
    "probe",
    "load",
    "status",
    "samples",
    "latency_mean_us",
    "latency_sd_us",
    "latency_p50_us",
    "latency_p90_us",
    "latency_p99_us",
    "latency_p999_us",
    "latency_max_us",
    "frames_executed",
    "frames_dropped",
    "deadlines_total",
    "deadlines_met",
    "deadlines_met_pct",
    "late_max_us",
    "desired_cpu_pct",
    "work_ratio",
    "fps",
    "low_1pct_fps",
    "load_unit",
    "load_amount",
    "load_rate_per_s",
    "load_cpu_pct",
    "error",
];

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

fn record(s: &ScenarioResult) -> Vec<String> {
    let r = s.outcome.result.as_ref();
    let latency = r.and_then(|r| r.latency_us);
    let deadlines = r.and_then(|r| r.deadlines);
    let gaming = r.and_then(|r| r.gaming);
    vec![
        s.probe.clone(),
        s.load.clone(),
        format!("{:?}", s.outcome.status).to_lowercase(),
        opt(latency.map(|l| l.samples)),
        opt(latency.map(|l| l.mean_us)),
        opt(latency.map(|l| l.sd_us)),
        opt(latency.map(|l| l.p50_us)),
        opt(latency.map(|l| l.p90_us)),
        opt(latency.map(|l| l.p99_us)),
        opt(latency.map(|l| l.p999_us)),
        opt(latency.map(|l| l.max_us)),
        opt(r.map(|r| r.frames.executed)),
        opt(r.map(|r| r.frames.dropped)),
        opt(deadlines.map(|d| d.total)),
        opt(deadlines.map(|d| d.met)),
        opt(deadlines.map(|d| d.met_pct)),
        opt(deadlines.map(|d| d.late_max_us)),
        opt(r.and_then(|r| r.cpu.desired_pct)),
        opt(r.and_then(|r| r.cpu.work_ratio)),
        opt(gaming.map(|g| g.fps)),
        opt(gaming.map(|g| g.low_1pct_fps)),
        joined(s, |w| w.unit.clone()),
        joined(s, |w| w.amount.to_string()),
        joined(s, |w| w.rate_per_s.to_string()),
        joined(s, |w| w.cpu_pct.to_string()),
        s.outcome.error.clone().unwrap_or_default(),
    ]
}

/// The run as CSV with a header row.
pub fn render(run: &RunDocument) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(COLUMNS).expect("writing to memory");
    for scenario in &run.scenarios {
        writer
            .write_record(record(scenario))
            .expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("flushing to memory"))
        .expect("CSV of UTF-8 fields is UTF-8")
}
