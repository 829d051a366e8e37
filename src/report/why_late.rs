//! The HTML page's "Why late" section of a probe: a stacked bar per load of
//! where its late events' time went, part by part, in ms per second
//! measured, and the table of causes per load, both read from the
//! `LateCauses` the run stored, with the late events' inferred context
//! where the window was sampled; nothing for a probe that split none.

use super::chart::{self, Labels, Layer};
use super::html::{escape, table};
use super::late::{self, CauseRow};
use crate::document::schema::RunDocument;
use crate::figures::late::LateCauses;
use anyhow::Result;

/// The section for `probe` of `run`, empty when none of its scenarios
/// split its late events.
pub fn section(run: &RunDocument, probe: &str) -> Result<String> {
    let split: Vec<(&str, &LateCauses, f64)> = run
        .scenarios_of(probe)
        .filter_map(|s| {
            let causes = late::causes_of(s)?;
            let measured_s = s.outcome.result.as_ref().map_or(0.0, |r| r.measured_s());
            Some((s.load.as_str(), causes, measured_s))
        })
        .collect();
    if split.is_empty() {
        return Ok(String::new());
    }
    let summaries: String = split
        .iter()
        .map(|(load, causes, _)| {
            let context = causes
                .context
                .as_ref()
                .map_or(String::new(), |c| format!("; {}", c.words()));
            format!(
                "<li>{}: {}{}</li>\n",
                escape(load),
                escape(&late::summary(causes)),
                escape(&context)
            )
        })
        .collect();
    Ok(format!(
        "<h3>Why late</h3>\n<ul>\n{summaries}</ul>\n<div class=\"charts\">\n{}</div>\n{}",
        late_time_chart(probe, &split)?,
        cause_table(&split)
    ))
}

/// The stacked bars of the late time by part, per load.
fn late_time_chart(probe: &str, split: &[(&str, &LateCauses, f64)]) -> Result<String> {
    let bars: Vec<String> = split.iter().map(|(load, _, _)| load.to_string()).collect();
    let by_part: Vec<Vec<(String, f64)>> = split
        .iter()
        .map(|(_, causes, measured_s)| {
            causes
                .late_parts()
                .by_part()
                .into_iter()
                .map(|(part, ns)| {
                    let per_s = match *measured_s > 0.0 {
                        true => ns as f64 / 1e6 / measured_s,
                        false => 0.0,
                    };
                    (part.words().to_string(), per_s)
                })
                .collect()
        })
        .collect();
    let layers: Vec<Layer> = by_part
        .first()
        .map(|parts| {
            (0..parts.len())
                .map(|i| Layer {
                    name: parts[i].0.clone(),
                    values: by_part.iter().map(|p| p[i].1).collect(),
                })
                .collect()
        })
        .unwrap_or_default();
    let title = format!("{probe}: where the late time went");
    let labels = Labels {
        title: &title,
        x: "load",
        y: "late time (ms per s measured)",
    };
    chart::stacked_bars(labels, &bars, &layers)
}

/// A row per load and cause: its late events, their share of the late
/// events and of the late events' delay, and the cause's part's p50 and
/// p99.
fn cause_table(split: &[(&str, &LateCauses, f64)]) -> String {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    let rows: Vec<Vec<(String, &str)>> = split
        .iter()
        .flat_map(|(load, causes, _)| {
            late::cause_rows(causes)
                .into_iter()
                .map(move |r: CauseRow| {
                    vec![
                        (load.to_string(), ""),
                        (r.cause.words().to_string(), ""),
                        (r.count.to_string(), "num"),
                        (format!("{:.1}", r.events_pct), "num"),
                        (format!("{:.1}", r.delay_pct), "num"),
                        (ms(r.part_p50_ms), "num"),
                        (ms(r.part_p99_ms), "num"),
                    ]
                })
        })
        .collect();
    table(
        &[
            "Load",
            "Cause",
            "Late",
            "% of late",
            "% of late delay",
            "p50 of its part (ms)",
            "p99 of its part (ms)",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::late::tests::causes;

    #[test]
    fn a_probe_that_split_its_late_events_gets_the_section() {
        let mut run = crate::document::fixture::run();
        assert_eq!(section(&run, "audio").unwrap(), "");
        run.scenarios[1].outcome.result.as_mut().unwrap().late = Some(causes(3, 1));
        let html = section(&run, "audio").unwrap();
        assert!(html.starts_with("<h3>Why late</h3>"), "{html}");
        assert!(html.contains("<li>burn: run-queue wait (89 %) of 4 late</li>"));
        assert!(html.contains("audio: where the late time went"));
        assert!(html.contains("late time (ms per s measured)"));
        assert!(html.contains(
            "<td>burn</td><td>run-queue wait</td><td class=\"num\">3</td><td class=\"num\">75.0</td><td class=\"num\">89.2</td>"
        ), "{html}");
        assert!(html.contains("<td>blocked (other)</td><td class=\"num\">1</td>"));
        assert!(html.contains("<th>% of late delay</th>"), "{html}");
        let mut with_context = causes(3, 1);
        with_context.context = Some(crate::figures::late_context::LateContext {
            basis: "inferred".into(),
            events: 4,
            during_late: Default::default(),
            window: Default::default(),
        });
        run.scenarios[1].outcome.result.as_mut().unwrap().late = Some(with_context);
        let html = section(&run, "audio").unwrap();
        assert!(html.contains(
            "<li>burn: run-queue wait (89 %) of 4 late; during 4 late events: nothing seen (inferred)</li>"
        ), "{html}");
        let page = crate::report::html::render(&run).unwrap();
        assert_eq!(page.matches("<h3>Why late</h3>").count(), 1);
    }
}
