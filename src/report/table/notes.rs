//! The lines under a scenario's row: why its events were late, its
//! confidence intervals and the measurements they took, and with
//! `--verbose` its telemetry.

use super::*;

/// `          late: run-queue wait (92 %) of 130 late`, under the row of a
/// scenario whose probe split its late events; empty otherwise.
pub(super) fn render_late(scenario: &ScenarioResult) -> String {
    late::causes_of(scenario).map_or_else(String::new, |causes| {
        format!("{:w$}late: {}\n", "", late::summary(causes), w = LOAD_WIDTH)
    })
}

/// `  95% CI mean 0.980–1.050 ms, p99 ... (method)` for a scenario with
/// intervals, the method followed by the measurements it took in a run
/// with `--precision`.
pub(super) fn render_intervals(
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
