//! The console table, in interbench's shape plus p99 and the load's work: one
//! table per probe, one row per load, after the run's overview. `run`
//! prints it when its scenarios are done, `report` from the saved run.

use super::late;
use super::overview;
use super::requests;
use crate::document::estimate::{Cut, CUT_LEGEND};
use crate::document::figure::Figure;
use crate::document::precision;
use crate::document::schema::{
    IntervalMethod, Intervals, LoadWork, Measurement, RunDocument, RunSettingsRecord,
    ScenarioResult, ScenarioStatus,
};
use crate::figures::{rate, Column, ColumnSource, ProbeSheet};
use crate::measure::batches::BATCHES;
use crate::sim::ResponseParams;
use crate::system::blockdev::DeviceFigures;

mod notes;
mod preamble;

pub use notes::{has_cut_interval, intervals_text, method_name};
use notes::{render_intervals, render_late, render_telemetry};
use preamble::{render_legend, render_preamble};

/// Column titles of a probe's table.
pub fn header_cells(sheet: &ProbeSheet) -> Vec<&str> {
    std::iter::once("Load")
        .chain(sheet.columns.iter().map(|c| c.header.as_str()))
        .chain(std::iter::once("Load work"))
        .collect()
}

/// The text of one column of a result: its figures joined by ` +/- `, or
/// the ratio of its first figure to `baseline`'s for a ratio column, or
/// what the load did for a load column (its amount per measurement, of
/// `measurements`), or the column's mark for missing values.
fn column_cell(
    column: &Column,
    sheet: &ProbeSheet,
    measurement: &Measurement,
    measurements: usize,
    baseline: Option<&Measurement>,
) -> String {
    let text = match column.source {
        ColumnSource::Figures => figures_text(column, sheet, measurement, baseline),
        ColumnSource::LoadAmount => load_amount_text(&measurement.load_work, measurements),
        ColumnSource::LoadCpu => load_cpu_text(&measurement.load_work),
    };
    text.unwrap_or_else(|| column.missing.clone())
}

/// The figures of a figures column, or the ratio of its first to
/// `baseline`'s.
fn figures_text(
    column: &Column,
    sheet: &ProbeSheet,
    measurement: &Measurement,
    baseline: Option<&Measurement>,
) -> Option<String> {
    let value = |key: &String, of: &Measurement| {
        let def = sheet.figure(key)?;
        Some((def, Figure::Probe(def.clone()).of(of)?))
    };
    if column.ratio_to_none {
        let key = column.figures.first()?;
        let (_, value_here) = value(key, measurement)?;
        let (_, value_idle) = value(key, baseline?)?;
        return (value_idle > 0.0).then(|| format!("{:.2}", value_here / value_idle));
    }
    column
        .figures
        .iter()
        .map(|key| value(key, measurement).map(|(def, v)| def.show(v)))
        .collect::<Option<Vec<String>>>()
        .map(|v| v.join(" +/- "))
}

/// The units each load part did per measurement (a merge holds the sum of
/// its `measurements` that finished), parts joined by `+`; none without
/// load work.
fn load_amount_text(work: &[LoadWork], measurements: usize) -> Option<String> {
    let per = measurements.max(1) as f64;
    let parts: Vec<String> = work.iter().map(|w| rate(w.amount / per)).collect();
    (!parts.is_empty()).then(|| parts.join("+"))
}

/// The CPU all load parts used together, `≥` when a part's is a lower
/// bound; none without load work.
fn load_cpu_text(work: &[LoadWork]) -> Option<String> {
    let cpu_pct: f64 = work.iter().map(|w| w.cpu_pct).sum();
    let bound = work.iter().any(|w| w.cpu_pct_lower_bound);
    (!work.is_empty()).then(|| format!("{}{cpu_pct:.0}", if bound { "≥" } else { "" }))
}

/// Whether a load part did disk I/O worth showing.
fn did_io(w: &LoadWork) -> bool {
    w.device_read_mb_s.unwrap_or(0.0) + w.device_write_mb_s.unwrap_or(0.0) >= 0.1
}

/// The I/O a load part's processes caused, when worth showing or not known.
fn io_text(w: &LoadWork) -> String {
    match (w.device_read_mb_s, w.device_write_mb_s) {
        (Some(read), Some(write)) if did_io(w) => {
            format!(" (read {}, dirtied {} MB/s)", rate(read), rate(write))
        }
        (Some(_), Some(_)) => String::new(),
        _ => " (I/O not known)".to_string(),
    }
}

/// The load-work cell: each part's rate and CPU use, the I/O its processes
/// caused (bytes read from the device, bytes of pages dirtied: not yet
/// written) and, when they did I/O, what the work directory's device itself
/// read and wrote (`device`, from the scenario's telemetry). The requests
/// a part timed are in the table after the probe's ([`render_probe_end`]).
pub fn load_work_cell(work: &[LoadWork], device: Option<&DeviceFigures>) -> String {
    if work.is_empty() {
        return "-".to_string();
    }
    let parts = work.iter().map(|w| {
        format!(
            "{} {} {}/s, {}{:.0} % CPU{}",
            w.load,
            rate(w.rate_per_s),
            w.unit,
            if w.cpu_pct_lower_bound { "≥ " } else { "" },
            w.cpu_pct,
            io_text(w)
        )
    });
    let device = device.filter(|_| work.iter().any(did_io)).map(|d| {
        format!(
            "device read {} write {} MB/s, {:.0} % busy",
            rate(d.read_mb_s),
            rate(d.write_mb_s),
            d.busy_pct
        )
    });
    parts.chain(device).collect::<Vec<_>>().join("; ")
}

/// The cells of one scenario's row; a failed scenario has its reason in the
/// second cell and no others.
/// `baseline` is what the probe measured under no load, for the ratio
/// columns.
pub fn row_cells(
    scenario: &ScenarioResult,
    sheet: &ProbeSheet,
    baseline: Option<&Measurement>,
) -> Vec<String> {
    let outcome = &scenario.outcome;
    if outcome.status != ScenarioStatus::Ok || outcome.result.is_none() {
        let reason = outcome.error.as_deref().unwrap_or("no result");
        return vec![scenario.load.clone(), format!("FAILED: {reason}")];
    }
    let measurements = scenario
        .measurements()
        .iter()
        .filter(|m| m.status == ScenarioStatus::Ok)
        .count();
    std::iter::once(scenario.load.clone())
        .chain(
            sheet
                .columns
                .iter()
                .map(|c| column_cell(c, sheet, outcome, measurements, baseline)),
        )
        .chain(std::iter::once(load_work_cell(
            &outcome.load_work,
            outcome
                .telemetry
                .as_ref()
                .and_then(|t| t.figures.device.as_ref()),
        )))
        .collect()
}

/// Width of the load column.
const LOAD_WIDTH: usize = 10;

/// One line of `cells`, the first left-aligned in the load column, the
/// others right-aligned in `widths` and two spaces apart, the last as it is.
fn line(cells: &[impl AsRef<str>], widths: &[usize]) -> String {
    let mut out = String::new();
    for (i, cell) in cells.iter().enumerate() {
        let cell = cell.as_ref();
        let last = i + 1 == cells.len();
        match widths.get(i) {
            Some(&w) if !last && i == 0 => out.push_str(&format!("{cell:<w$}")),
            Some(&w) if !last => out.push_str(&format!("{cell:>w$}  ")),
            _ => out.push_str(cell),
        }
    }
    out.trim_end().to_string() + "\n"
}

/// The widths of a probe's table, load column first.
fn widths(sheet: &ProbeSheet) -> Vec<usize> {
    std::iter::once(LOAD_WIDTH)
        .chain(sheet.columns.iter().map(|c| c.width))
        .collect()
}

/// The title and column header of a probe's table.
pub fn render_probe_header(probe_name: &str, sheet: &ProbeSheet) -> String {
    format!(
        "\n--- {probe_name}: {} ---\n{}",
        sheet.summary,
        line(&header_cells(sheet), &widths(sheet))
    )
}

/// What follows a probe's table (its `scenarios`): the table of the
/// requests their loads timed, when they did (tiobench's); empty otherwise.
pub fn render_probe_end<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioResult>) -> String {
    requests::table(scenarios).map_or_else(String::new, |t| t.console())
}

/// One scenario's row, and its confidence intervals on a line below when
/// it has them (in a run with `--precision`, always, with the measurements
/// it took), then why its events were late when its probe split them; a
/// load name too long for its column gets a line of its own above the
/// figures.
pub fn render_row(
    scenario: &ScenarioResult,
    sheet: &ProbeSheet,
    settings: &RunSettingsRecord,
    baseline: Option<&Measurement>,
) -> String {
    let mut cells = row_cells(scenario, sheet, baseline);
    let name = std::mem::take(&mut cells[0]);
    let unnamed = line(&cells, &widths(sheet));
    let figures = with_name(&name, &unnamed).unwrap_or_else(|| format!("{name}\n{unnamed}"));
    figures + &render_intervals(scenario, sheet, settings) + &render_late(scenario)
}

/// `line` with `name` written over its start, when the blanks there hold
/// it and one more (a long load name may use the first column's padding);
/// `None` when it would touch a figure.
fn with_name(name: &str, line: &str) -> Option<String> {
    let width = name.chars().count();
    let (cut, _) = line.char_indices().nth(width + 1)?;
    line[..cut]
        .chars()
        .all(|c| c == ' ')
        .then(|| format!("{name}{}", &line[cut - 1..]))
}

/// The whole console output of a run, the overview before the tables
/// (`verbose`: with the telemetry line under each row).
pub fn render(run: &RunDocument, verbose: bool) -> String {
    let mut out = render_preamble(run) + &overview::render(run);
    for probe_name in run.probes() {
        let sheet = run.sheet(probe_name).cloned().unwrap_or_default();
        out.push_str(&render_probe_header(probe_name, &sheet));
        for scenario in run.scenarios_of(probe_name) {
            out.push_str(&render_row(
                scenario,
                &sheet,
                &run.settings,
                run.baseline_of(probe_name),
            ));
            if verbose {
                out.push_str(&render_telemetry(scenario));
            }
        }
        out.push_str(&render_probe_end(run.scenarios_of(probe_name)));
    }
    out + &render_legend(run)
}

/// Left-aligned columns two spaces apart.
pub fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
