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

/// The probe's table as the console shows it: a row per load, a column
/// per sheet column, then the load's work; each row anchored for the heat
/// map.
fn results_table(run: &RunDocument, probe: &str, sheet: &ProbeSheet) -> String {
    let baseline = run.baseline_of(probe);
    let ids: Vec<String> = (run.scenarios.iter().enumerate())
        .filter(|(_, s)| s.probe == probe)
        .map(|(index, _)| heat_map::scenario_anchor(index))
        .collect();
    let rows: Vec<Vec<(String, &str)>> = run
        .scenarios_of(probe)
        .map(|scenario| {
            let cells = console::row_cells(scenario, sheet, baseline);
            let last = cells.len() - 1;
            cells
                .into_iter()
                .enumerate()
                .map(|(i, cell)| (cell, if i == 0 || i == last { "" } else { "num" }))
                .collect()
        })
        .collect();
    table_with_ids(&console::header_cells(sheet), &rows, &ids)
        + &requests_table(run.scenarios_of(probe))
}

/// tiobench's table of the requests the loads of `scenarios` timed, under
/// the probe's; empty when none did.
fn requests_table<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioResult>) -> String {
    let Some(requests) = super::requests::table(scenarios) else {
        return String::new();
    };
    let header: Vec<&str> = requests.header.iter().map(String::as_str).collect();
    let rows: Vec<Vec<(String, &str)>> = requests
        .rows
        .into_iter()
        .map(|row| {
            let classes = std::iter::once("").chain(std::iter::repeat("num"));
            row.into_iter().zip(classes).collect()
        })
        .collect();
    format!(
        "<p>{}:</p>\n{}",
        escape(super::requests::TITLE),
        table(&header, &rows)
    )
}

/// The confidence intervals of the probe's scenarios as the console shows
/// them, a bound cut at a limit marked and explained; empty when none has.
fn intervals_list(run: &RunDocument, probe: &str, sheet: &ProbeSheet) -> String {
    let items: Vec<String> = run
        .scenarios_of(probe)
        .filter_map(|s| {
            let intervals = s.intervals.as_ref()?;
            let text = format!(
                "{}: {} ({})",
                s.load,
                console::intervals_text(intervals, sheet),
                console::method_name(intervals.method)
            );
            Some(format!("<li>{}</li>\n", escape(&text)))
        })
        .collect();
    if items.is_empty() {
        return String::new();
    }
    let legend = match console::has_cut_interval(run.scenarios_of(probe)) {
        true => format!("<p>{}</p>\n", escape(CUT_LEGEND)),
        false => String::new(),
    };
    format!("<ul>\n{}</ul>\n{legend}", items.concat())
}

/// Who made the run, when and how.
fn run_table(run: &RunDocument) -> String {
    let info = &run.run;
    let rows = [
        ("started", info.started.clone()),
        ("finished", info.finished.clone().unwrap_or_default()),
        ("comment", info.comment.clone().unwrap_or_default()),
        ("suite", SuiteRecord::describe(run.suite.as_ref())),
        ("command line", info.command_line.join(" ")),
        ("feelbench", run.tool.version.clone()),
    ];
    let rows: Vec<Vec<(String, &str)>> = rows
        .into_iter()
        .map(|(k, v)| vec![(k.to_string(), ""), (v, "")])
        .collect();
    table(&["run", ""], &rows)
}

/// The environment and the warnings of `run`.
fn environment_tables(run: &RunDocument) -> String {
    let env: Vec<Vec<(String, &str)>> = environment::pairs(&run.environment)
        .into_iter()
        .map(|(k, v)| vec![(k, ""), (v, "")])
        .collect();
    let warnings: Vec<Vec<(String, &str)>> = run
        .warnings
        .iter()
        .map(|w| {
            let code = serde_json::to_value(w.code)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            vec![(code, ""), (w.message.clone(), "")]
        })
        .collect();
    format!(
        "<h2 id=\"environment\">Environment</h2>\n{}<h2 id=\"warnings\">Warnings</h2>\n{}",
        table(&["key", "value"], &env),
        match warnings.is_empty() {
            true => "<p>none</p>\n".to_string(),
            false => table(&["warning", "message"], &warnings),
        }
    )
}

/// The charts of one probe over `drawn` (one series each), in a `div`:
/// histogram and CDF of each set of its latency samples, each compared figure with its
/// intervals, and the latency over time of each scenario that recorded it.
pub fn charts(title: &str, sheet: &ProbeSheet, drawn: &[Drawn]) -> Result<String> {
    let mut svgs = Vec::new();
    let sets = sample_sets(sheet);
    for samples in &sets {
        let distributions = distributions(samples, drawn)?;
        if !distributions.is_empty() {
            let subject = subject(title, &sets, samples);
            svgs.push(histogram(&subject, &distributions)?);
            svgs.push(cdf(&subject, &distributions)?);
        }
    }
    for def in sheet.figures.iter().filter(|f| f.compared) {
        svgs.extend(figure_intervals(title, def, drawn).transpose()?);
    }
    for d in drawn {
        svgs.extend(over_time(title, d).transpose()?);
    }
    Ok(format!(
        "<div class=\"charts\">\n{}</div>\n",
        svgs.join("\n")
    ))
}

/// Figure `def` of each drawn scenario with its interval, `None` when no
/// scenario has it.
fn figure_intervals(title: &str, def: &FigureDef, drawn: &[Drawn]) -> Option<Result<String>> {
    let figure = Figure::Probe(def.clone());
    let values: Vec<Ranged> = drawn
        .iter()
        .filter_map(|d| {
            let found = estimate(d.scenario, &figure)?;
            let computed = found.uncertainty.map(|(e, _)| e.interval(RUN_LEVEL));
            let (low, high) = computed
                .map(|c| figure.within_range(c))
                .unwrap_or((found.value, found.value));
            let cut = computed.is_some_and(|c| Cut::between(c, (low, high)).any());
            let shown = |value| def.unit.shown(value);
            Some(Ranged {
                name: match cut {
                    true => format!("{} (interval cut)", d.name),
                    false => d.name.clone(),
                },
                value: shown(found.value),
                low: shown(low),
                high: shown(high),
            })
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let title = format!("{title}: {} ({}% interval)", def.label, RUN_LEVEL * 100.0);
    let labels = Labels {
        title: &title,
        x: "",
        y: &def.label,
    };
    Some(chart::intervals(labels, &values))
}

/// The latency series a scenario recorded, if any.
fn series_of<'a>(d: &Drawn<'a>) -> Option<&'a LatencySeries> {
    d.scenario.outcome.result.as_ref()?.series.as_ref()
}

/// The latency over time of one drawn scenario with its ideal line, `None`
/// when it recorded none.
fn over_time(title: &str, d: &Drawn) -> Option<Result<String>> {
    let series = series_of(d)?;
    let line = |name: &str, of: fn(&SeriesPoint) -> f64| Line {
        name: name.to_string(),
        points: series
            .points
            .iter()
            .map(|p| (p.t_s, of(p) / 1000.0))
            .collect(),
    };
    let title = format!("{title} under {}: latency over time", d.name);
    let labels = Labels {
        title: &title,
        x: "time (s)",
        y: "latency (ms)",
    };
    // Until the series was merged each point is one sample: its max is its mean.
    let lines = match series.points.iter().any(|p| p.count > 1) {
        true => vec![line("max", |p| p.max_us), line("mean", |p| p.mean_us)],
        false => vec![line("latency", |p| p.mean_us)],
    };
    Some(chart::over_time(
        labels,
        &lines,
        series.ideal_us.map(|us| us / 1000.0),
    ))
}

/// The names of the latency distributions the sheet's quantiles are taken
/// of, in the order of its figures (`latency`; micro's `fork`, `exec`, ...).
fn sample_sets(sheet: &ProbeSheet) -> Vec<&str> {
    let mut sets: Vec<&str> = Vec::new();
    for samples in sheet.figures.iter().filter_map(quantile_of) {
        if !sets.contains(&samples) {
            sets.push(samples);
        }
    }
    sets
}

/// The distribution figure `def` is a quantile of, if it is one.
fn quantile_of(def: &FigureDef) -> Option<&str> {
    match &def.formula {
        Formula::Quantile { samples, .. } => Some(samples.as_str()),
        _ => None,
    }
}

/// What a chart of distribution `samples` is titled after: `title`, with
/// the distribution's name when the probe has several (`micro (fork)`).
fn subject(title: &str, sets: &[&str], samples: &str) -> String {
    match sets.len() {
        0 | 1 => title.to_string(),
        _ => format!("{title} ({samples})"),
    }
}

/// A scenario's latency distribution as its histogram's buckets.
struct Distribution {
    /// The series' name.
    name: String,
    /// Each bucket's highest latency (ms) and its count, in order.
    buckets: Vec<(f64, u64)>,
}

/// Each drawn scenario's buckets (ms, count) of distribution `name`,
/// named; scenarios without it (a failed scenario, an operation left out)
/// are left out.
fn distributions(name: &str, drawn: &[Drawn]) -> Result<Vec<Distribution>> {
    let mut out = Vec::new();
    for d in drawn {
        let Some(samples) = d
            .scenario
            .outcome
            .result
            .as_ref()
            .and_then(|r| r.tally.samples.get(name))
        else {
            continue;
        };
        let histogram: LatencyHistogram = samples
            .decode()
            .with_context(|| format!("the {name:?} histogram of {} is damaged", d.name))?;
        let buckets = histogram
            .recorded()
            .into_iter()
            .map(|(ns, n)| (ns as f64 / 1e6, n))
            .collect();
        out.push(Distribution {
            name: d.name.clone(),
            buckets,
        });
    }
    Ok(out)
}

/// The latency histogram: the buckets re-binned into bins of equal width
/// on a log scale, from the smallest latency to the largest (a linear axis
/// puts nearly every sample in its first bins when the largest is ten
/// times the median).
fn histogram(title: &str, distributions: &[Distribution]) -> Result<String> {
    let title = format!("{title}: latency histogram");
    chart::histogram(
        Labels {
            title: &title,
            x: "latency (ms)",
            y: "samples",
        },
        &log_bins(distributions),
    )
}

/// Each distribution as log-spaced bins between the smallest and the
/// largest latency of all: a point per bin at its geometric middle, with
/// its count. Twice the square root of the largest sample count bins,
/// within [`HISTOGRAM_BINS`], so that a few dozen samples do not make a
/// comb.
fn log_bins(distributions: &[Distribution]) -> Vec<Line> {
    let (bottom, top) = latency_range(distributions);
    let samples = distributions
        .iter()
        .map(|d| d.buckets.iter().map(|b| b.1).sum::<u64>())
        .max()
        .unwrap_or(0);
    let (fewest, most) = HISTOGRAM_BINS;
    let count = ((2.0 * (samples as f64).sqrt()) as usize).clamp(fewest, most);
    let per_bin = (top / bottom).ln() / count as f64;
    distributions
        .iter()
        .map(|Distribution { name, buckets }| {
            let mut bins = vec![0u64; count];
            for &(ms, n) in buckets {
                let at = ((ms.max(bottom) / bottom).ln() / per_bin) as usize;
                bins[at.min(count - 1)] += n;
            }
            let points = bins
                .iter()
                .enumerate()
                .map(|(i, &n)| (bottom * ((i as f64 + 0.5) * per_bin).exp(), n as f64))
                .collect();
            Line {
                name: name.clone(),
                points,
            }
        })
        .collect()
}

/// The latency CDF at log-spaced latencies from the smallest to the largest.
fn cdf(title: &str, distributions: &[Distribution]) -> Result<String> {
    let (bottom, top) = latency_range(distributions);
    let steps = (CDF_POINTS - 1) as f64;
    let lines: Vec<Line> = distributions
        .iter()
        .map(|Distribution { name, buckets }| {
            let total = buckets.iter().map(|b| b.1).sum::<u64>().max(1) as f64;
            let points = (0..CDF_POINTS)
                .map(|i| {
                    let at = bottom * (top / bottom).powf(i as f64 / steps);
                    let below: u64 = buckets
                        .iter()
                        .filter(|b| b.0 <= at * (1.0 + 1e-9))
                        .map(|b| b.1)
                        .sum();
                    (at, below as f64 / total)
                })
                .collect();
            Line {
                name: name.clone(),
                points,
            }
        })
        .collect();
    let title = format!("{title}: latency CDF");
    chart::cdf(
        Labels {
            title: &title,
            x: "latency (ms)",
            y: "share of samples at or below",
        },
        &lines,
    )
}

/// The smallest and the largest latency of all distributions (ms), for a
/// log axis: the largest at least 1 µs, the smallest above 0, at most a
/// millionth of the largest below it, and below the largest (a tenth of
/// it when every sample is the same).
fn latency_range(distributions: &[Distribution]) -> (f64, f64) {
    let top = distributions
        .iter()
        .filter_map(|d| d.buckets.last().map(|(ms, _)| *ms))
        .fold(1e-3, f64::max);
    let bottom = distributions
        .iter()
        .filter_map(|d| d.buckets.first().map(|(ms, _)| *ms))
        .fold(top, f64::min)
        .max(top * 1e-6)
        .max(1e-6);
    match bottom < top {
        true => (bottom, top),
        false => (top / 10.0, top),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    /// `ms` latencies as a histogram's buckets, named `name`.
    fn distribution(name: &str, ms: impl Iterator<Item = f64>) -> Distribution {
        let mut h = LatencyHistogram::new();
        ms.for_each(|ms| h.record_ns((ms * 1e6) as u64));
        let buckets = h.recorded().into_iter().map(|(ns, n)| (ns as f64 / 1e6, n));
        Distribution {
            name: name.into(),
            buckets: buckets.collect(),
        }
    }

    #[test]
    fn a_long_tailed_distribution_spreads_over_many_log_bins() {
        // 298 samples from 0.05 to 0.3 ms and two at 2.7 ms: on a linear
        // axis from 0 they fill the first 11 % of it.
        let bulk = (0..298).map(|i| 0.05 + 0.25 * f64::from(i) / 297.0);
        let long = distribution("x", bulk.chain([2.7, 2.7]));
        let lines = log_bins(std::slice::from_ref(&long));
        let counts: Vec<f64> = lines[0].points.iter().map(|p| p.1).collect();
        // Twice the square root of 300.
        assert_eq!(counts.len(), 34);
        assert_eq!(counts.iter().sum::<f64>(), 300.0);
        let used = counts.iter().filter(|&&n| n > 0.0).count();
        assert!(used >= 34 * 4 / 10, "{used} bins hold samples: {counts:?}");
        assert_eq!(counts[33], 2.0, "the tail in the last bin");
        let xs: Vec<f64> = lines[0].points.iter().map(|p| p.0).collect();
        assert!(xs[0] >= 0.04 && xs[33] <= 2.8, "{xs:?}");
        // Equal steps on a log scale.
        let step = |i: usize| xs[i + 1] / xs[i];
        assert!((step(0) - step(30)).abs() < 1e-9);
        // One value only: a finite range below it, the fewest bins.
        let same = distribution("y", [1.0, 1.0].into_iter());
        let lines = log_bins(&[same]);
        assert!(lines[0].points.iter().all(|p| p.0.is_finite() && p.0 > 0.0));
        assert_eq!(lines[0].points.len(), HISTOGRAM_BINS.0);
        assert_eq!(lines[0].points[HISTOGRAM_BINS.0 - 1].1, 2.0);
    }

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
