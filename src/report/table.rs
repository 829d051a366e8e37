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

/// The lines printed before any table: what ran where.
pub fn render_preamble(run: &RunDocument) -> String {
    let s = &run.settings;
    let policy = match s.probe_sched.fifo_priority {
        Some(p) => format!("SCHED_FIFO {p}"),
        None => "SCHED_OTHER".to_string(),
    };
    let timing = match (s.precision_pct, s.max_time_s) {
        (Some(pct), Some(max_s)) => format!(
            "{} until ±{pct} % (at most {max_s} s per scenario)",
            measuring_time(run, "measurement")
        ),
        _ if s.repeats > 1 => format!(
            "{} × {} repeats",
            measuring_time(run, "scenario"),
            s.repeats
        ),
        _ => measuring_time(run, "scenario"),
    };
    let pm_qos = s
        .cpu_dma_latency_us
        .map(|us| format!(", PM QoS held at {us} µs"))
        .unwrap_or_default();
    let mut out = format!(
        "feelbench {} on {} ({} CPUs), kernel {}\n{timing}, loops_per_ms {:.0}, probe {} nice {}, loads nice {}{}{pm_qos}\n",
        run.tool.version,
        run.system.hostname,
        run.system.cpus,
        run.system.kernel_release,
        s.loops_per_ms,
        policy,
        s.probe_sched.nice,
        s.load_nice,
        placement(s),
    );
    if let Some(suite) = &run.suite {
        out.push_str(&format!(
            "suite {} version {}: {}\n",
            suite.name, suite.version, suite.summary
        ));
    }
    if let Some(response) = &s.response {
        out.push_str(&response_line(response));
    }
    if let Some(comment) = &run.run.comment {
        out.push_str(&format!("comment: {comment}\n"));
    }
    out
}

/// How long each `unit` (scenario, measurement) measures: `-t`, and for
/// the probes of the run that set their own pace, until their work is done.
fn measuring_time(run: &RunDocument, unit: &str) -> String {
    let (own, timed): (Vec<_>, Vec<_>) = run.probes.iter().partition(|(_, sheet)| sheet.own_pace);
    let own: Vec<&str> = own.into_iter().map(|(name, _)| name.as_str()).collect();
    let duration = format!("{} s per {unit}", run.settings.duration_s);
    match (own.is_empty(), timed.is_empty()) {
        (true, _) => duration,
        (false, true) => format!("each {unit} until its probe's work is done"),
        (false, false) => format!("{duration} ({}: until done)", own.join(", ")),
    }
}

/// How the probes that answer after an idle gap worked, as resp1 said it
/// ("minimum 5 data points at 20 sec intervals").
fn response_line(p: &ResponseParams) -> String {
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    format!(
        "response/command: {} points after {} s idle gaps; arrays {:.0} MiB kept + {:.0} MiB fresh; command {}{}\n",
        p.points,
        p.gap_ns as f64 / 1e9,
        mib(p.resident_bytes),
        mib(p.fresh_bytes),
        p.command.as_deref().unwrap_or("ls -l /usr/bin"),
        if p.cold { ", cold (page cache dropped before each)" } else { "" }
    )
}

/// Where the probe and the loads ran, when the run chose it: `, probe on
/// CPUs 0, loads on CPUs 1, loads at CPU weight 10`.
fn placement(s: &RunSettingsRecord) -> String {
    let parts = [
        s.probe_cpus.as_ref().map(|c| format!("probe on CPUs {c}")),
        s.load_cpus.as_ref().map(|c| format!("loads on CPUs {c}")),
        s.load_cpu_weight
            .map(|w| format!("loads at CPU weight {w}")),
    ];
    parts
        .into_iter()
        .flatten()
        .map(|p| format!(", {p}"))
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

/// `          late: run-queue wait (92 %) of 130 late`, under the row of a
/// scenario whose probe split its late events; empty otherwise.
fn render_late(scenario: &ScenarioResult) -> String {
    late::causes_of(scenario).map_or_else(String::new, |causes| {
        format!("{:w$}late: {}\n", "", late::summary(causes), w = LOAD_WIDTH)
    })
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

/// `  95% CI mean 0.980–1.050 ms, p99 ... (method)` for a scenario with
/// intervals, the method followed by the measurements it took in a run
/// with `--precision`.
fn render_intervals(
    scenario: &ScenarioResult,
    sheet: &ProbeSheet,
    settings: &RunSettingsRecord,
) -> String {
    let measured = measurements_note(scenario, sheet, settings);
    let Some(intervals) = &scenario.intervals else {
        return measured.map_or_else(String::new, |m| {
            format!("{:w$}no CI ({m})\n", "", w = LOAD_WIDTH)
        });
    };
    let source = std::iter::once(method_name(intervals.method).to_string())
        .chain(measured)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{:w$}{} ({source})\n",
        "",
        intervals_text(intervals, sheet),
        w = LOAD_WIDTH
    )
}

/// `95% CI mean 0.980–1.050 ms, deadlines 74.6–≥100.0 %`: the intervals of
/// a scenario, a bound cut at a limit marked (see [`Cut::range`]).
pub fn intervals_text(intervals: &Intervals, sheet: &ProbeSheet) -> String {
    let ranges: Vec<String> = intervals
        .figures
        .iter()
        .filter_map(|f| {
            let def = sheet.figure(&f.figure)?;
            let cut = Cut::of(f, intervals.level);
            Some(format!(
                "{} {}{}",
                f.figure,
                cut.range(&def.show(f.low), &def.show(f.high)),
                def.unit.suffix()
            ))
        })
        .collect();
    format!("{:.0}% CI {}", intervals.level * 100.0, ranges.join(", "))
}

/// Whether an interval of `scenarios` has a bound cut at a limit.
pub fn has_cut_interval<'a>(scenarios: impl IntoIterator<Item = &'a ScenarioResult>) -> bool {
    scenarios
        .into_iter()
        .filter_map(|s| s.intervals.as_ref())
        .any(|i| i.figures.iter().any(|f| Cut::of(f, i.level).any()))
}

/// In a run with `--precision`, for a scenario that ran: `4 × 3 s`, the
/// measurements it took, and the headline figures that did not reach the
/// goal (`; not within ±5: p99`).
fn measurements_note(
    scenario: &ScenarioResult,
    sheet: &ProbeSheet,
    settings: &RunSettingsRecord,
) -> Option<String> {
    let pct = settings.precision_pct?;
    if scenario.outcome.status != ScenarioStatus::Ok {
        return None;
    }
    let count = scenario.measurements().len();
    let mut note = match sheet.own_pace {
        true => format!("{count} measurement(s)"),
        false => format!("{count} × {} s", settings.duration_s),
    };
    let imprecise = precision::imprecise_figures(scenario, sheet, pct);
    if !imprecise.is_empty() {
        note.push_str(&format!("; not within ±{pct}: {}", imprecise.join(", ")));
    }
    Some(note)
}

/// The method of an interval in words (`batch means`, `repeats`).
pub fn method_name(method: IntervalMethod) -> &'static str {
    match method {
        IntervalMethod::BatchMeans => "batch means",
        IntervalMethod::Repeats => "repeats",
    }
}

/// What the CI lines mean, for the end of a run's tables; empty when no
/// scenario has intervals.
pub fn render_legend(run: &RunDocument) -> String {
    let mut methods: Vec<IntervalMethod> = run
        .scenarios
        .iter()
        .filter_map(|s| s.intervals.as_ref().map(|i| i.method))
        .collect();
    methods.dedup();
    if methods.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\nCI: two-sided confidence intervals (Student t) of the headline figures;\n");
    if methods.contains(&IntervalMethod::BatchMeans) {
        out.push_str(&format!("  batch means: from the figures of {BATCHES} sub-windows of each measurement, neighbours merged while\n  correlated; they hold the spread within the run, not the drift between runs (use --repeat 3+)\n"));
        if run.settings.response.is_some() {
            out.push_str("  (response and command: one sub-window per point)\n");
        }
    }
    if methods.contains(&IntervalMethod::Repeats) {
        out.push_str("  repeats: from the spread of the figure across the scenario's repeats\n");
    }
    if has_cut_interval(&run.scenarios) {
        out.push_str(&format!("  {CUT_LEGEND}\n"));
    }
    out
}

/// The compact telemetry line printed under a row with `--verbose`, one per
/// repeat when the scenario was repeated (the merge has none); empty when
/// the scenario has no telemetry. `-` marks a figure the kernel lacks.
pub fn render_telemetry(scenario: &ScenarioResult) -> String {
    match scenario.repeats.as_slice() {
        [] => telemetry_line(&scenario.outcome, ""),
        repeats => repeats
            .iter()
            .enumerate()
            .map(|(i, m)| telemetry_line(m, &format!("repeat {}: ", i + 1)))
            .collect(),
    }
}

/// The telemetry line of one measurement, its figures after `label`.
fn telemetry_line(measurement: &Measurement, label: &str) -> String {
    let Some(t) = &measurement.telemetry else {
        return String::new();
    };
    let f = &t.figures;
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let count = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let rate = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    let mut text = format!(
        "  {label}psi some cpu {} mem {} io {} % | cs {}/s irq {}/s | cpu usr {} sys {} iowait {} steal {} % | swap in {} out {} majflt {} | others {} % cpu",
        pct(f.psi.cpu.some_pct),
        pct(f.psi.memory.some_pct),
        pct(f.psi.io.some_pct),
        rate(f.context_switches_per_s),
        rate(f.interrupts_per_s),
        pct(f.cpu.user_pct),
        pct(f.cpu.system_pct),
        pct(f.cpu.iowait_pct),
        pct(f.cpu.steal_pct),
        count(f.vmstat.swap_in_pages),
        count(f.vmstat.swap_out_pages),
        count(f.vmstat.major_faults),
        pct(f.foreign.as_ref().map(|o| o.cpu_pct)),
    );
    if let Some(d) = &f.device {
        text.push_str(&format!(
            " | device read {} write {} MB/s busy {:.0} %",
            crate::figures::rate(d.read_mb_s),
            crate::figures::rate(d.write_mb_s),
            d.busy_pct
        ));
    }
    if f.disturbed.is_some() {
        text.push_str(" | DISTURBED");
    }
    text.push('\n');
    text
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
mod tests {
    use super::*;

    use crate::system::counters::{CpuTicks, StatCounters};
    use crate::system::telemetry::{ScenarioTelemetry, TelemetrySample};

    #[test]
    fn a_long_load_name_uses_the_first_columns_padding_or_its_own_line() {
        let line = "               4.908  x\n";
        assert_eq!(
            with_name("ioseqwrite", line).unwrap(),
            "ioseqwrite     4.908  x\n"
        );
        assert_eq!(
            with_name("none", line).unwrap(),
            "none           4.908  x\n"
        );
        assert_eq!(with_name("burn+write+read", line), None);
    }

    #[test]
    fn intervals_are_shown_under_the_row_and_explained_once() {
        use crate::document::schema::{FigureInterval, Intervals};
        let mut run = crate::document::fixture::run();
        run.scenarios[0].intervals = Some(Intervals {
            method: IntervalMethod::BatchMeans,
            level: 0.95,
            figures: vec![
                FigureInterval {
                    figure: "mean".into(),
                    value: 52.0,
                    low: 50.0,
                    high: 54.6,
                    se: 1.0,
                    df: 19.0,
                    samples: 20,
                },
                FigureInterval {
                    figure: "deadlines".into(),
                    value: 90.0,
                    low: 88.25,
                    high: 91.75,
                    se: 0.8,
                    df: 19.0,
                    samples: 20,
                },
            ],
        });
        let sheet = run.sheet(&run.scenarios[0].probe).unwrap();
        let row = render_row(&run.scenarios[0], sheet, &run.settings, None);
        assert!(
            row.ends_with(
                "\n          95% CI mean 0.050–0.055 ms, deadlines 88.2–91.8 % (batch means)\n"
            ),
            "{row}"
        );
        let text = render(&run, false);
        assert_eq!(text.matches("batch means:").count(), 1, "{text}");
        assert!(!render(&crate::document::fixture::run(), false).contains("CI"));
    }

    #[test]
    fn a_bound_cut_at_a_limit_is_marked_in_every_rendering() {
        use crate::document::schema::{FigureInterval, Intervals};
        let mut run = crate::document::fixture::run();
        let interval = |figure: &str, value: f64, se: f64, low: f64, high: f64| FigureInterval {
            figure: figure.into(),
            value,
            low,
            high,
            se,
            df: 19.0,
            samples: 20,
        };
        // t(0.975, 19) = 2.093: mean 52 ± 62.8 µs is cut at 0, deadlines
        // 99.0 ± 2.1 % at 100.
        run.scenarios[0].intervals = Some(Intervals {
            method: IntervalMethod::BatchMeans,
            level: 0.95,
            figures: vec![
                interval("mean", 52.0, 30.0, 0.0, 114.8),
                interval("deadlines", 99.0, 1.0, 96.9, 100.0),
            ],
        });
        let marked = "95% CI mean ≤0.000–0.115 ms, deadlines 96.9–≥100.0 %";
        let console = render(&run, false);
        assert!(console.contains(marked), "{console}");
        assert!(console.contains(CUT_LEGEND), "{console}");
        let markdown = crate::report::markdown::render(&run);
        assert!(
            markdown.contains(&format!("- none: {marked} (batch means)")),
            "{markdown}"
        );
        assert!(markdown.contains(CUT_LEGEND), "{markdown}");
        let html = crate::report::html::render(&run).unwrap();
        assert!(html.contains(marked), "{html}");
        // The CSV field `column` of the first scenario.
        let csv_field = |run: &RunDocument, column: &str| {
            let csv = crate::report::csv::render(run);
            let mut lines = csv
                .lines()
                .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
            let header = lines.next().unwrap();
            let at = header.iter().position(|h| h == column).unwrap();
            lines.next().unwrap()[at].clone()
        };
        assert_eq!(csv_field(&run, "latency_mean_us_ci_low"), "0");
        assert_eq!(csv_field(&run, "latency_mean_us_ci_cut"), "low");
        assert_eq!(csv_field(&run, "deadlines_met_pct_ci_cut"), "high");
        assert_eq!(csv_field(&run, "ci_method"), "batch_means");
        // Not cut: no mark, and no legend.
        run.scenarios[0].intervals.as_mut().unwrap().figures =
            vec![interval("mean", 52.0, 1.0, 49.9, 54.1)];
        let console = render(&run, false);
        assert!(
            console.contains("95% CI mean 0.050–0.054 ms (batch means)"),
            "{console}"
        );
        assert!(!console.contains('≤') && !console.contains(CUT_LEGEND));
        assert_eq!(csv_field(&run, "latency_mean_us_ci_cut"), "");
    }

    #[test]
    fn a_row_of_a_probe_that_split_its_late_events_says_their_cause() {
        let mut run = crate::document::fixture::run();
        let causes = crate::report::late::tests::causes(3, 1);
        run.scenarios[1].outcome.result.as_mut().unwrap().late = Some(causes);
        let text = render(&run, false);
        let burn = text.lines().position(|l| l.starts_with("burn")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[burn + 1],
            "          late: run-queue wait (89 %) of 4 late",
            "{text}"
        );
        assert_eq!(text.matches("late:").count(), 1, "{text}");
        let md = crate::report::markdown::render(&run);
        assert!(md.contains("| Load work | Late |\n| --- |"), "{md}");
        assert!(
            md.contains(" | run-queue wait (89 %) of 4 late |\n"),
            "{md}"
        );
        assert!(
            !crate::report::markdown::render(&crate::document::fixture::run()).contains("| Late |")
        );
    }

    #[test]
    fn the_load_work_cell_says_rate_cpu_and_a_bound() {
        let work = crate::document::merge::tests::burn(100.0, 50.0, 1.0);
        let plain = load_work_cell(std::slice::from_ref(&work), None);
        assert_eq!(plain, "burn 100 Mloop/s, 50 % CPU");
        let bounded = LoadWork {
            cpu_pct_lower_bound: true,
            device_write_mb_s: None,
            ..work
        };
        assert_eq!(
            load_work_cell(&[bounded], None),
            "burn 100 Mloop/s, ≥ 50 % CPU (I/O not known)"
        );
    }

    #[test]
    fn the_requests_loads_timed_follow_their_probes_table() {
        use crate::measure::requests::RequestLatencies;
        let mut run = crate::document::fixture::run();
        let mut requests = RequestLatencies::new(&[100_000_000]);
        requests.record(3_000_000);
        run.scenarios[1].outcome.load_work[0].requests = Some(requests);
        let text = render(&run, false);
        let title = format!("  {}:", super::super::requests::TITLE);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| *l == title).expect(&text);
        assert!(
            lines[at - 1].starts_with("video "),
            "after audio's rows: {text}"
        );
        assert!(lines[at + 2].starts_with("  burn "), "{text}");
        let gaming = lines.iter().position(|l| l.starts_with("--- gaming"));
        assert!(gaming > Some(at), "before the next probe's table: {text}");
        assert_eq!(text.matches(&title).count(), 1, "{text}");
        let md = crate::report::markdown::render(&run);
        assert!(md.contains("| Load | Threads | Rate Mloop/s |"), "{md}");
        let html = crate::report::html::render(&run).unwrap();
        let requests = html
            .find("requests the loads timed")
            .expect("in the HTML page");
        assert!(
            html[requests..].contains("<th>CPU eff Mloop/s</th>"),
            "{html}"
        );
        assert!(!render(&crate::document::fixture::run(), false).contains(&title));
    }

    #[test]
    fn a_ratio_column_divides_by_the_same_figure_under_no_load() {
        let mut run = crate::document::fixture::run();
        let sheet = run.probes.get_mut("audio").unwrap();
        sheet.columns = vec![Column::ratio_to_none("Ratio", "mean", 6)];
        let text = render(&run, false);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("none") || l.starts_with("burn"))
            .collect();
        // The audio rows (mean latency 52.5 and 1234.5 µs), then gaming's.
        assert_eq!(rows[0].split_whitespace().nth(1), Some("1.00"), "{text}");
        assert_eq!(rows[1].split_whitespace().nth(1), Some("23.51"), "{text}");
        let without_baseline =
            render_row(&run.scenarios[1], &run.probes["audio"], &run.settings, None);
        assert!(
            without_baseline.starts_with("burn           -"),
            "{without_baseline}"
        );
    }

    #[test]
    fn load_columns_show_the_loads_work_per_measurement_and_its_cpu() {
        let mut run = crate::document::fixture::run();
        let sheet = run.probes.get_mut("audio").unwrap();
        sheet.columns = vec![
            Column::load("Loads", ColumnSource::LoadAmount, 7),
            Column::load("LCPU %", ColumnSource::LoadCpu, 7),
        ];
        let sheet = sheet.clone();
        let cells = |scenario: &ScenarioResult| row_cells(scenario, &sheet, None)[1..3].to_vec();
        assert_eq!(cells(&run.scenarios[0]), ["-", "-"], "none: no load work");
        assert_eq!(cells(&run.scenarios[1]), ["2700", "165"]);
        // Two repeats merged hold the sum of their amounts; a second part
        // is joined with `+`, its CPU added, a lower bound marked.
        let burn = &mut run.scenarios[1];
        burn.repeats = vec![burn.outcome.clone(); 2];
        let mut second = burn.outcome.load_work[0].clone();
        second.amount = 30.0;
        second.cpu_pct = 10.0;
        second.cpu_pct_lower_bound = true;
        burn.outcome.load_work.push(second);
        assert_eq!(cells(burn), ["1350+15.0", "≥175"]);
        let json = serde_json::to_string(&sheet.columns[0]).unwrap();
        assert!(json.contains(r#""source":"load_amount""#), "{json}");
        let figures = serde_json::to_string(&Column::new("Mean", &["mean"], 6)).unwrap();
        assert!(!figures.contains("source"), "left out: {figures}");
        let old: Column =
            serde_json::from_str(r#"{"header":"Mean","figures":["mean"],"width":6,"missing":"-"}"#)
                .unwrap();
        assert_eq!(old.source, ColumnSource::Figures, "old documents read");
    }

    #[test]
    fn telemetry_line_shows_figures_and_marks_absent_ones() {
        let mut scenario = crate::document::fixture::run().scenarios.remove(0);
        assert_eq!(render_telemetry(&scenario), "");
        let stat = |user, idle, steal, ctxt| {
            Some(StatCounters {
                cpu: CpuTicks {
                    user,
                    nice: 0,
                    system: 0,
                    idle,
                    iowait: None,
                    irq: None,
                    softirq: None,
                    steal: Some(steal),
                },
                ctxt: Some(ctxt),
                intr: None,
            })
        };
        let before = TelemetrySample {
            taken_ns: 0,
            stat: stat(0, 0, 0, 0),
            ..TelemetrySample::default()
        };
        let after = TelemetrySample {
            taken_ns: 2_000_000_000,
            stat: stat(90, 0, 10, 3000),
            ..TelemetrySample::default()
        };
        scenario.outcome.telemetry = Some(ScenarioTelemetry::new(before, after));
        assert_eq!(
            render_telemetry(&scenario),
            "  psi some cpu - mem - io - % | cs 1500/s irq -/s | cpu usr 90.0 sys 0.0 iowait - steal 10.0 % | swap in - out - majflt - | others - % cpu | DISTURBED\n"
        );
        scenario.repeats = vec![scenario.outcome.clone(), scenario.outcome.clone()];
        scenario.outcome.telemetry = None;
        let lines = render_telemetry(&scenario);
        let starts: Vec<_> = lines.lines().map(|l| &l[..20]).collect();
        assert_eq!(starts, ["  repeat 1: psi some", "  repeat 2: psi some"]);
    }

    #[test]
    fn with_precision_each_row_says_its_measurements_and_what_is_not_precise() {
        use crate::document::schema::{FigureInterval, Intervals};
        let mut run = crate::document::fixture::run();
        run.settings.precision_pct = Some(5.0);
        run.settings.max_time_s = Some(30.0);
        assert!(render_preamble(&run).contains(
            "\n3 s per measurement until ±5 % (at most 30 s per scenario), loops_per_ms"
        ));
        let mut scenario = run.scenarios[0].clone();
        let sheet = run.sheet(&scenario.probe).unwrap().clone();
        let row = render_row(&scenario, &sheet, &run.settings, None);
        assert!(
            row.ends_with("\n          no CI (1 × 3 s; not within ±5: mean, p99, deadlines)\n"),
            "{row}"
        );
        let interval = |figure: &str, value: f64| FigureInterval {
            figure: figure.into(),
            value,
            low: value - 1.0,
            high: value + 1.0,
            se: 0.5,
            df: 3.0,
            samples: 4,
        };
        scenario.repeats = vec![scenario.outcome.clone(); 4];
        scenario.intervals = Some(Intervals {
            method: IntervalMethod::Repeats,
            level: 0.95,
            figures: vec![interval("mean", 52.0), interval("p99", 300.0)],
        });
        let row = render_row(&scenario, &sheet, &run.settings, None);
        assert!(
            row.ends_with("(repeats, 4 × 3 s; not within ±5: deadlines)\n"),
            "{row}"
        );
        let failed = &run.scenarios[3];
        assert!(!render_row(failed, &sheet, &run.settings, None).contains("CI"));
    }

    #[test]
    fn preamble_names_the_repeats_only_when_there_are_several() {
        let mut run = crate::document::fixture::run();
        assert!(render_preamble(&run).contains("\n3 s per scenario, loops_per_ms"));
        run.settings.repeats = 3;
        assert!(render_preamble(&run).contains("\n3 s per scenario × 3 repeats, loops_per_ms"));
    }

    #[test]
    fn preamble_says_which_probes_measure_until_their_work_is_done() {
        let mut run = crate::document::fixture::run();
        run.probes.get_mut("gaming").unwrap().own_pace = true;
        assert!(render_preamble(&run).contains("\n3 s per scenario (gaming: until done), loops"));
        run.probes.get_mut("audio").unwrap().own_pace = true;
        run.settings.repeats = 3;
        let preamble = render_preamble(&run);
        assert!(
            preamble.contains("\neach scenario until its probe's work is done × 3 repeats, loops"),
            "{preamble}"
        );
    }

    #[test]
    fn preamble_names_the_pm_qos_limit_only_when_held() {
        let mut run = crate::document::fixture::run();
        assert!(!render_preamble(&run).contains("PM QoS"));
        run.settings.cpu_dma_latency_us = Some(0);
        assert!(render_preamble(&run).contains("loads nice 0, PM QoS held at 0 µs\n"));
    }

    #[test]
    fn preamble_names_the_placement_only_when_chosen() {
        let mut run = crate::document::fixture::run();
        assert!(render_preamble(&run).contains("loads nice 0\n"));
        run.settings.load_cpus = "1".parse().ok();
        assert!(render_preamble(&run).contains("loads nice 0, loads on CPUs 1\n"));
        run.settings.probe_cpus = "0".parse().ok();
        run.settings.load_cpu_weight = Some(10);
        assert!(render_preamble(&run)
            .contains("loads nice 0, probe on CPUs 0, loads on CPUs 1, loads at CPU weight 10\n"));
    }
}
