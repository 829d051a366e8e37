//! History as a console table (values in the unit the figure is shown in,
//! with its label) and as CSV (plain numbers in the stored unit, as the
//! run's CSV has them).

use super::{By, History, MarkKind};
use crate::report::table::aligned;

/// The history as a console table: what it shows, then a row per run or
/// per kernel, then the annotations within it.
pub fn table(h: &History) -> String {
    let show = |v: f64| h.shown.unit.show(v);
    let mut rows: Vec<Vec<String>> = Vec::new();
    match h.by {
        By::Run => {
            rows.push(
                ["RUN", "STARTED", "KERNEL", "VALUE", "INTERVAL", "COMMENT"]
                    .map(String::from)
                    .to_vec(),
            );
            for p in &h.points {
                let interval = match (p.ci_low, p.ci_high) {
                    (Some(low), Some(high)) => format!("{} – {}", show(low), show(high)),
                    _ => "-".to_string(),
                };
                rows.push(vec![
                    p.run_id.clone(),
                    p.started.clone(),
                    p.kernel.clone(),
                    show(p.value),
                    interval,
                    p.comment.clone().unwrap_or_default(),
                ]);
            }
        }
        By::Kernel => {
            rows.push(
                ["KERNEL", "RUNS", "MEDIAN", "MIN", "MAX"]
                    .map(String::from)
                    .to_vec(),
            );
            for k in &h.kernels {
                rows.push(vec![
                    k.kernel.clone(),
                    k.runs.to_string(),
                    show(k.median),
                    show(k.min),
                    show(k.max),
                ]);
            }
        }
    }
    let mut out = format!("{}\n", title(h));
    for s in &h.series {
        out += &format!("series {s}\n");
    }
    out += "\n";
    out += &aligned(&rows);
    for m in &h.marks {
        let what = match m.kind {
            MarkKind::Annotation => "annotation",
            MarkKind::Method => "new method versions",
        };
        out += &format!("{what} from run {} ({}): {}\n", m.run_key, m.kernel, m.note);
    }
    out
}

/// What the history shows, in words: `x under burn: latency p99 (ms), lower is better`.
pub fn title(h: &History) -> String {
    let better = match h.shown.better {
        crate::figures::Better::Lower => "lower",
        crate::figures::Better::Higher => "higher",
    };
    format!(
        "{} under {}: {}, {better} is better",
        h.probe, h.load, h.shown.label
    )
}

/// The history as CSV with a header: a record per run, or per kernel.
pub fn csv(h: &History) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let number = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    match h.by {
        By::Run => {
            writer.write_record([
                "run", "run_id", "started", "kernel", "series", "probe", "load", "figure", "value",
                "ci_low", "ci_high", "comment",
            ])?;
            for p in &h.points {
                writer.write_record([
                    p.run_key.clone(),
                    p.run_id.clone(),
                    p.started.clone(),
                    p.kernel.clone(),
                    p.series.clone(),
                    h.probe.clone(),
                    h.load.clone(),
                    h.shown.figure.clone(),
                    p.value.to_string(),
                    number(p.ci_low),
                    number(p.ci_high),
                    p.comment.clone().unwrap_or_default(),
                ])?;
            }
        }
        By::Kernel => {
            writer.write_record([
                "kernel", "probe", "load", "figure", "runs", "median", "min", "max",
            ])?;
            for k in &h.kernels {
                writer.write_record([
                    k.kernel.clone(),
                    h.probe.clone(),
                    h.load.clone(),
                    h.shown.figure.clone(),
                    k.runs.to_string(),
                    k.median.to_string(),
                    k.min.to_string(),
                    k.max.to_string(),
                ])?;
            }
        }
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}
