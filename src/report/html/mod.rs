//! The HTML report: one self-contained page (inline SVG charts and CSS, no
//! script, nothing fetched) that opens with the run's overview as a heat
//! map and a table of contents (`heat_map`), then per probe its table
//! (each row an anchor the heat map links to) and, folded away
//! (`<details>`), its latency histogram, the CDF of every load, its
//! compared figures with their intervals and its latency over time, and
//! why its events were late (`why_late`), then the environment and the
//! warnings. Everything is read from the stored `ProbeSheet`s, so it
//! knows no probe; every text from the run file is escaped.

use super::chart::{self, Labels, Line, Ranged};
use super::table as console;
use super::{heat_map, why_late};
use crate::document::estimate::{estimate, Cut, CUT_LEGEND, RUN_LEVEL};
use crate::document::figure::Figure;
use crate::document::schema::{RunDocument, ScenarioResult, SuiteRecord};
use crate::figures::series::{LatencySeries, SeriesPoint};
use crate::figures::{FigureDef, Formula, ProbeSheet};
use crate::measure::latency::LatencyHistogram;
use crate::system::environment;
use anyhow::{Context, Result};
use std::fmt::Write;

mod charts;
mod tables;

pub use charts::charts;
use charts::{
    cdf, distributions, figure_intervals, histogram, over_time, quantile_of, sample_sets,
    series_of, subject,
};
use tables::{environment_tables, intervals_list, results_table, run_table};

/// The fewest and most bins of the latency histogram.
const HISTOGRAM_BINS: (usize, usize) = (20, 100);
/// Points of a CDF line.
const CDF_POINTS: usize = 200;

/// One scenario drawn as one series, under its name in the legends.
pub struct Drawn<'a> {
    pub name: String,
    pub scenario: &'a ScenarioResult,
}

/// The single charts `--format svg` draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartKind {
    /// The latency histogram, a line per load, of the samples of quantile
    /// figure `of` (the probe's first when `None`).
    Histogram { of: Option<String> },
    /// The latency CDF, a line per load, of the samples of quantile figure
    /// `of` (the probe's first when `None`).
    Cdf { of: Option<String> },
    /// The latency over time under one load (the first that recorded it
    /// when `None`), with the ideal line.
    OverTime { load: Option<String> },
    /// One figure per load with its interval (the probe's first compared
    /// figure when `None`).
    Figure { key: Option<String> },
}

/// `text` with `<`, `>`, `&` and quotes escaped, safe inside an element or
/// a quoted attribute.
pub fn escape(text: &str) -> String {
    html_escape::encode_quoted_attribute(text).into_owned()
}

/// The whole page for `run`.
pub fn render(run: &RunDocument) -> Result<String> {
    let mut body = format!("<h1>feelbench run {}</h1>\n", escape(&run.run.id));
    if let Some(words) = run.run.trace_words() {
        let _ = writeln!(body, "<p class=\"trace\">{}</p>", escape(&words));
    }
    // Probes in run order, as the overview and the console have them.
    let sections: Vec<&str> = run
        .probes()
        .into_iter()
        .filter(|p| run.probes.contains_key(*p))
        .collect();
    body += &heat_map::render(run, &sections);
    body += &run_table(run);
    for (probe, sheet) in sections
        .iter()
        .filter_map(|p| Some((*p, run.probes.get(*p)?)))
    {
        let drawn = drawn_loads(run, probe);
        let _ = write!(
            body,
            "<section>\n<h2 id=\"{}\">{}</h2>\n<p>{}</p>\n",
            heat_map::probe_anchor(probe),
            escape(probe),
            escape(&sheet.summary)
        );
        body += &results_table(run, probe, sheet);
        body += &intervals_list(run, probe, sheet);
        let charts = charts(probe, sheet, &drawn)? + &why_late::section(run, probe)?;
        let _ = write!(
            body,
            "<details>\n<summary>Charts of {} ({})</summary>\n{charts}</details>\n",
            escape(probe),
            charts.matches("<svg").count()
        );
        body += "</section>\n";
    }
    body += &environment_tables(run);
    Ok(page(&format!("feelbench run {}", run.run.id), &body))
}

/// Why `--format svg` cannot draw the chart asked for.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// A name given that the run does not have (bad input).
    #[error("the run has no {what} {name:?}{of}; it has: {known}")]
    Unknown {
        /// `probe`, `load` or `figure`.
        what: &'static str,
        name: String,
        /// ` of "probe"` for a load or a figure.
        of: String,
        known: String,
    },
    /// The run holds nothing to draw it from.
    #[error("{0}")]
    Nothing(String),
    #[error(transparent)]
    Drawing(#[from] anyhow::Error),
}

impl ChartError {
    fn unknown<'a>(
        what: &'static str,
        name: &str,
        of: &str,
        known: impl Iterator<Item = &'a str>,
    ) -> Self {
        ChartError::Unknown {
            what,
            name: name.to_string(),
            of: match of.is_empty() {
                true => String::new(),
                false => format!(" of {of:?}"),
            },
            known: known.collect::<Vec<_>>().join(", "),
        }
    }
}

/// One chart of `probe` in `run`, as an SVG document.
pub fn render_svg(run: &RunDocument, probe: &str, kind: &ChartKind) -> Result<String, ChartError> {
    let sheet = run.sheet(probe).ok_or_else(|| {
        ChartError::unknown("probe", probe, "", run.probes.keys().map(String::as_str))
    })?;
    let drawn = drawn_loads(run, probe);
    Ok(match kind {
        ChartKind::Histogram { of } | ChartKind::Cdf { of } => {
            let sets = sample_sets(sheet);
            let samples = match of {
                Some(key) => sheet.figure(key).and_then(quantile_of).ok_or_else(|| {
                    let quantiles = sheet.figures.iter().filter(|f| quantile_of(f).is_some());
                    let keys = quantiles.map(|f| f.key.as_str());
                    ChartError::unknown("quantile figure", key, probe, keys)
                })?,
                None => sets.first().copied().ok_or_else(|| {
                    ChartError::Nothing(format!("{probe:?} has no latency samples to draw"))
                })?,
            };
            let subject = subject(probe, &sets, samples);
            let distributions = distributions(samples, &drawn)?;
            match kind {
                ChartKind::Histogram { .. } => histogram(&subject, &distributions)?,
                _ => cdf(&subject, &distributions)?,
            }
        }
        ChartKind::OverTime { load } => {
            let d = match load {
                Some(load) => drawn.iter().find(|d| &d.name == load).ok_or_else(|| {
                    ChartError::unknown("load", load, probe, drawn.iter().map(|d| d.name.as_str()))
                })?,
                None => drawn
                    .iter()
                    .find(|d| series_of(d).is_some())
                    .or(drawn.first())
                    .ok_or_else(|| {
                        ChartError::Nothing(format!("the run has no scenario of {probe:?}"))
                    })?,
            };
            over_time(probe, d).ok_or_else(|| {
                ChartError::Nothing(format!(
                    "the run has no latency over time of {probe:?} under {:?} \
                     (recorded by frame probes from feelbench.run/2 on; merged repeats keep none)",
                    d.name
                ))
            })??
        }
        ChartKind::Figure { key } => {
            let keys = || sheet.figures.iter().map(|f| f.key.as_str());
            let def = match key {
                Some(key) => sheet
                    .figure(key)
                    .ok_or_else(|| ChartError::unknown("figure", key, probe, keys()))?,
                None => sheet.figures.iter().find(|f| f.compared).ok_or_else(|| {
                    ChartError::Nothing(format!(
                        "{probe:?} has no figure compared by default; give --figure"
                    ))
                })?,
            };
            figure_intervals(probe, def, &drawn).ok_or_else(|| {
                ChartError::Nothing(format!("no scenario of {probe:?} has {:?}", def.key))
            })??
        }
    })
}

/// The scenarios of `probe`, one per load, named by their load.
fn drawn_loads<'a>(run: &'a RunDocument, probe: &str) -> Vec<Drawn<'a>> {
    run.scenarios
        .iter()
        .filter(|s| s.probe == probe)
        .map(|scenario| Drawn {
            name: scenario.load.clone(),
            scenario,
        })
        .collect()
}

/// A page around `body`, with the style sheet.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}{}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title),
        heat_map::STYLE
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:1em 2em;color:#222}\
    h2{border-bottom:1px solid #999;margin-top:2em}\
    .charts{display:flex;flex-wrap:wrap;gap:8px}\
    .charts svg{border:1px solid #ddd}\
    table{border-collapse:collapse;margin:1em 0}\
    td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:90%}\
    td.num{text-align:right}\
    .better{background:#c8f0c8}.worse{background:#f6c6c6}\
    summary{cursor:pointer;margin:1em 0;font-weight:bold}";

/// A table: a header row, then rows of cells, each with its class
/// (`""` for none); every text is escaped here.
pub fn table(header: &[&str], rows: &[Vec<(String, &str)>]) -> String {
    table_with_ids(header, rows, &[])
}

/// The same, the rows given the ids `ids` in order (those after the last
/// id none).
fn table_with_ids(header: &[&str], rows: &[Vec<(String, &str)>], ids: &[String]) -> String {
    let mut out = String::from("<table>\n<tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr>\n";
    for (i, row) in rows.iter().enumerate() {
        match ids.get(i) {
            Some(id) => {
                let _ = write!(out, "<tr id=\"{}\">", escape(id));
            }
            None => out += "<tr>",
        }
        for (text, class) in row {
            match class.is_empty() {
                true => {
                    let _ = write!(out, "<td>{}</td>", escape(text));
                }
                false => {
                    let _ = write!(out, "<td class=\"{class}\">{}</td>", escape(text));
                }
            }
        }
        out += "</tr>\n";
    }
    out + "</table>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;
    #[test]
    fn escape_makes_markup_text() {
        assert_eq!(
            escape("<script>alert(\"1\")</script> & 'x'"),
            "&lt;script&gt;alert(&quot;1&quot;)&lt;/script&gt; &amp; &#x27;x&#x27;"
        );
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn the_page_has_charts_per_probe_and_shows_the_comment_as_text() {
        let mut run = fixture::run();
        run.run.comment = Some("<script>alert(1)</script>".into());
        let html = render(&run).unwrap();
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("<script>"));
        assert_eq!(html.matches("<section>").count(), run.probes.len());
        for sheet in run.probes.values() {
            let header = sheet.columns[0].header.as_str();
            assert!(html.contains(&format!("<th>{}</th>", escape(header))));
        }
        assert!(html.matches("<svg").count() >= 2 * run.probes.len());
        assert!(html.contains("<h2 id=\"environment\">Environment</h2>"));
        // The answer first; each probe's charts folded away.
        let overview = html.find("<div id=\"overview\">").unwrap();
        assert!(overview < html.find("<section>").unwrap());
        assert_eq!(html.matches("<details>").count(), run.probes.len());
        assert!(
            html.contains("<tr id=\"scenario-1\">"),
            "the heat map's links land"
        );
    }

    /// `run` with a series recorded by its first successful scenario.
    fn with_series(mut run: RunDocument) -> RunDocument {
        let scenario = run
            .scenarios
            .iter_mut()
            .find(|s| s.outcome.result.is_some())
            .unwrap();
        let point = |t_s: f64, us: f64| SeriesPoint {
            t_s,
            count: 1,
            min_us: us,
            mean_us: us,
            max_us: us,
        };
        scenario.outcome.result.as_mut().unwrap().series = Some(LatencySeries {
            ideal_us: Some(5_805.0),
            points: vec![
                point(0.0, 5_900.0),
                point(0.5, 7_000.0),
                point(1.0, 5_850.0),
            ],
        });
        run
    }

    #[test]
    fn a_recorded_series_is_drawn_with_its_ideal_line() {
        let html = render(&with_series(fixture::run())).unwrap();
        assert!(html.contains("latency over time"));
        assert!(html.contains("\nideal\n"));
    }

    #[test]
    fn a_single_chart_is_an_svg_document() {
        let run = fixture::run();
        let probe = run.probes.keys().next().unwrap().clone();
        for kind in [
            ChartKind::Cdf { of: None },
            ChartKind::Histogram {
                of: Some("p99".into()),
            },
            ChartKind::Figure { key: None },
        ] {
            let svg = render_svg(&run, &probe, &kind).unwrap();
            assert!(svg.starts_with("<svg"), "{kind:?}");
        }
        assert!(render_svg(&run, "nonesuch", &ChartKind::Cdf { of: None }).is_err());
        let not_a_quantile = ChartKind::Cdf {
            of: Some("deadlines".into()),
        };
        let error = render_svg(&run, &probe, &not_a_quantile).unwrap_err();
        assert!(matches!(
            error,
            ChartError::Unknown {
                what: "quantile figure",
                ..
            }
        ));
        let unknown = ChartKind::Figure {
            key: Some("nonesuch".into()),
        };
        let error = render_svg(&run, &probe, &unknown).unwrap_err();
        assert!(matches!(error, ChartError::Unknown { what: "figure", .. }));
    }

    #[test]
    fn over_time_draws_the_load_asked_for_or_says_there_is_none() {
        let mut run = with_series(fixture::run());
        let drawn = run
            .scenarios
            .iter()
            .position(|s| s.outcome.result.is_some());
        let drawn = drawn.unwrap();
        let (probe, load) = (
            run.scenarios[drawn].probe.clone(),
            run.scenarios[drawn].load.clone(),
        );
        let kind = ChartKind::OverTime {
            load: Some(load.clone()),
        };
        let svg = render_svg(&run, &probe, &kind).unwrap();
        assert!(svg.contains(&format!("{probe} under {load}: latency over time")));
        assert!(svg.contains("\nideal\n"));
        run.scenarios[drawn].outcome.result.as_mut().unwrap().series = None;
        let error = render_svg(&run, &probe, &kind).unwrap_err().to_string();
        assert!(error.contains("no latency over time"), "{error}");
    }
}
