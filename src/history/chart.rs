//! History as a trend chart (SVG, drawn by `report::chart`) and as one
//! self-contained HTML page: the chart, the table and the series.

use super::{text, By, History};
use crate::report::chart::{self, Labels, Mark, Placed, TrendAxis};
use crate::report::html;
use anyhow::Result;

/// The trend chart: a point per run at its start time, or the median of
/// each kernel with its least and greatest value; the annotations as
/// vertical lines with their note.
pub fn svg(h: &History) -> Result<String> {
    let unit = h.shown.unit;
    let title = format!("{} under {}", h.probe, h.load);
    match h.by {
        By::Run => {
            let values: Vec<Placed> = h
                .points
                .iter()
                .map(|p| Placed {
                    x: p.started_unix as f64,
                    value: unit.shown(p.value),
                    low: unit.shown(p.ci_low.unwrap_or(p.value)),
                    high: unit.shown(p.ci_high.unwrap_or(p.value)),
                })
                .collect();
            let marks: Vec<Mark> = h
                .marks
                .iter()
                .map(|m| Mark {
                    x: m.started_unix as f64,
                    note: m.note.clone(),
                })
                .collect();
            let labels = Labels {
                title: &title,
                x: "run started (UTC)",
                y: &h.shown.label,
            };
            chart::trend(labels, &values, &marks, TrendAxis::Time)
        }
        By::Kernel => {
            let names: Vec<String> = h.kernels.iter().map(|k| k.kernel.clone()).collect();
            let values: Vec<Placed> = h
                .kernels
                .iter()
                .enumerate()
                .map(|(i, k)| Placed {
                    x: i as f64,
                    value: unit.shown(k.median),
                    low: unit.shown(k.min),
                    high: unit.shown(k.max),
                })
                .collect();
            let marks: Vec<Mark> = h
                .marks
                .iter()
                .filter_map(|m| {
                    let at = names.iter().position(|k| *k == m.kernel)?;
                    Some(Mark {
                        x: at as f64 - 0.5,
                        note: m.note.clone(),
                    })
                })
                .collect();
            let labels = Labels {
                title: &title,
                x: "kernel (median, least and greatest run)",
                y: &h.shown.label,
            };
            chart::trend(labels, &values, &marks, TrendAxis::Names(&names))
        }
    }
}

/// One page: the title, the series, the trend chart and the table.
pub fn page(h: &History) -> Result<String> {
    let title = text::title(h);
    let mut body = format!("<h1>{}</h1>\n", html::escape(&title));
    for s in &h.series {
        body += &format!("<p>series {}</p>\n", html::escape(&s.to_string()));
    }
    body += &format!("<div class=\"charts\">{}</div>\n", svg(h)?);
    let show = |v: f64| h.shown.unit.show(v);
    let num = "num";
    body += &match h.by {
        By::Run => html::table(
            &[
                "run",
                "started",
                "kernel",
                &h.shown.label,
                "interval",
                "comment",
            ],
            &h.points
                .iter()
                .map(|p| {
                    let interval = match (p.ci_low, p.ci_high) {
                        (Some(low), Some(high)) => format!("{} – {}", show(low), show(high)),
                        _ => "-".to_string(),
                    };
                    vec![
                        (p.run_id.clone(), ""),
                        (p.started.clone(), ""),
                        (p.kernel.clone(), ""),
                        (show(p.value), num),
                        (interval, num),
                        (p.comment.clone().unwrap_or_default(), ""),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
        By::Kernel => html::table(
            &["kernel", "runs", "median", "min", "max"],
            &h.kernels
                .iter()
                .map(|k| {
                    vec![
                        (k.kernel.clone(), ""),
                        (k.runs.to_string(), num),
                        (show(k.median), num),
                        (show(k.min), num),
                        (show(k.max), num),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    };
    if !h.marks.is_empty() {
        body += "<h2>Annotations</h2>\n";
        body += &html::table(
            &["from run", "kernel", "note"],
            &h.marks
                .iter()
                .map(|m| {
                    vec![
                        (m.run_key.clone(), ""),
                        (m.kernel.clone(), ""),
                        (m.note.clone(), ""),
                    ]
                })
                .collect::<Vec<_>>(),
        );
    }
    Ok(html::page(&title, &body))
}
